{#- The declarations the project reads instead of writing names of its own: the shipped corpora
    (ingest/corpora.toml: key, title, language, texts, cloze and what its norms hold, game, the reading measures
    each has, and each reading kind's exclusions) and the reading measures (ingest/corpus_declarations.py's
    MEASURES, and the measures of each reading kind), in their declared order. `predictabase` passes them to
    every dbt command as the environment variable PREDICTABASE_DECLARATIONS
    (predictabase.warehouse.dbt.declarations). A user's corpora reach dbt as rows of raw.corpora. -#}
{% macro declarations() -%}
{%- set text = env_var('PREDICTABASE_DECLARATIONS', '') -%}
{%- if not text -%}
{{ exceptions.raise_compiler_error("PREDICTABASE_DECLARATIONS is not set: run dbt through `predictabase build`, "
   ~ "or set it to the output of `python -m predictabase.warehouse` (dbt_project/README.md)") }}
{%- endif -%}
{{ return(fromjson(text)) }}
{%- endmacro %}

{#- The keys of the shipped corpora, in declared order; with `has`: only those that have it ('texts', 'cloze',
    'game', or 'measures': reading measures). -#}
{% macro shipped_corpora(has=none) -%}
{%- set out = [] -%}
{%- for c in declarations()['corpora'] -%}{%- if has is none or c[has] -%}{%- do out.append(c['key']) -%}{%- endif -%}{%- endfor -%}
{{ return(out) }}
{%- endmacro %}

{#- The keys of the shipped corpora with a kind of reading data ('eye_tracking', 'self_paced_reading'), in
    declared order, as a SQL list: ('a', 'b'). -#}
{% macro shipped_corpora_reading(kind) -%}
({%- for c in declarations()['corpora'] if kind in c['reading'] -%}'{{ c['key'] }}'{{ ', ' if not loop.last }}{%- endfor -%})
{%- endmacro %}

{#- The reading measures of a shipped corpus, in the measures' declared order. -#}
{% macro corpus_measures(corpus) -%}
{%- for c in declarations()['corpora'] if c['key'] == corpus -%}{{ return(c['measures']) }}{%- endfor -%}
{{ return([]) }}
{%- endmacro %}

{#- Every reading measure, in declared order. -#}
{% macro reading_measures() -%}
{{ return(declarations()['measures']) }}
{%- endmacro %}

{#- A reading measure's name for people (e.g. 'gaze duration'). -#}
{% macro measure_label(measure) -%}
{{ return(declarations()['measure_labels'][measure]) }}
{%- endmacro %}

{#- A shipped corpus's title. -#}
{% macro corpus_title(corpus) -%}
{%- for c in declarations()['corpora'] if c['key'] == corpus -%}{{ return(c['title']) }}{%- endfor -%}
{{ exceptions.raise_compiler_error("no shipped corpus " ~ corpus) }}
{%- endmacro %}

{#- The LM-game study's corpus (the shipped corpus whose `game` is true), as a SQL string literal. -#}
{% macro game_corpus() -%}
'{{ shipped_corpora('game')[0] }}'
{%- endmacro %}

{#- The measures of a reading kind ('eye_tracking', 'self_paced_reading'), in declared order. -#}
{% macro kind_measures(kind) -%}
{{ return(declarations()['kind_measures'][kind]) }}
{%- endmacro %}

{#- The shipped corpora's reading-time exclusion rules (ingest/corpora.toml [<corpus>.exclusions.<kind>]), one row
    per (corpus, reading kind) that declares any, as a SQL query: corpus, kind, rt_min_ms, rt_max_ms, edges
    ('sentence', 'text' or NULL), min_correct_answers, regression_min_correct_answers, comprehension_questions.
    A corpus and kind without a row keeps every time. -#}
{% macro reading_exclusions() -%}
{%- set rules = declarations()['exclusions'] -%}
select * from (values
{%- for r in rules %}
    ({{ declared_value(r['corpus'], 'varchar') }}, {{ declared_value(r['kind'], 'varchar') }}, {{ declared_value(r['rt_min_ms'], 'double') }}, {{ declared_value(r['rt_max_ms'], 'double') }}, {{ declared_value(r['edges'], 'varchar') }}, {{ declared_value(r['min_correct_answers'], 'integer') }}, {{ declared_value(r['regression_min_correct_answers'], 'integer') }}, {{ declared_value(r['comprehension_questions'], 'integer') }}){{ ',' if not loop.last }}
{%- endfor %}
) as exclusions (corpus, kind, rt_min_ms, rt_max_ms, edges, min_correct_answers, regression_min_correct_answers,
    comprehension_questions)
{%- endmacro %}

{#- A declared value as a typed SQL literal (NULL when not declared). -#}
{% macro declared_value(v, type) -%}
{%- if v is none -%}cast(null as {{ type }}){%- elif type == 'varchar' -%}'{{ v }}'{%- else -%}cast({{ v }} as {{ type }}){%- endif -%}
{%- endmacro %}

{#- The keys of the shipped cloze corpora whose norms are `norms` ('responses': every response kept;
    'published_probabilities': each word's published probability only), in declared order. -#}
{% macro cloze_corpus_keys(norms) -%}
{%- set out = [] -%}
{%- for c in declarations()['corpora'] if c['cloze_norms'] == norms -%}{%- do out.append(c['key']) -%}{%- endfor -%}
{{ return(out) }}
{%- endmacro %}

{#- The same as a SQL list: ('a', 'b'). -#}
{% macro cloze_corpora(norms) -%}
({{ sql_strings(cloze_corpus_keys(norms)) }})
{%- endmacro %}

{#- Strings as SQL string literals, comma-separated: 'a', 'b'. -#}
{% macro sql_strings(values) -%}
{%- for v in values -%}'{{ v }}'{{ ', ' if not loop.last }}{%- endfor -%}
{%- endmacro %}
