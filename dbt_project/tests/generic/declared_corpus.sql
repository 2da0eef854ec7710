{#- The column holds only shipped corpora that declare `has` (ingest/corpora.toml, through declarations()): a kind
    of reading data ('self_paced_reading', 'eye_tracking') or 'cloze' (norms of either kind). The test a
    column of shipped-corpus rows takes instead of accepted_values with the corpus names written out, so a corpus
    declared with that data joins the allowed values without an edit here. -#}
{% test declared_corpus(model, column_name, has) %}
{%- set keys = [] -%}
{%- for c in declarations()['corpora'] -%}
  {%- if (has == 'cloze' and c['cloze']) or has in c['reading'] -%}{%- do keys.append(c['key']) -%}{%- endif -%}
{%- endfor -%}
{%- if not keys -%}
{{ exceptions.raise_compiler_error("declared_corpus: no shipped corpus declares " ~ has) }}
{%- endif %}
select {{ column_name }}
from {{ model }}
where {{ column_name }} not in ({{ sql_strings(keys) }})
{% endtest %}
