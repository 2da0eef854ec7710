{#- The declarations the project reads instead of writing names of its own: the shipped corpora
    (ingest/corpora.toml: key, title, language, texts, cloze, game, and the reading measures each has) and the
    reading measures (ingest/corpus_declarations.py's MEASURES), in their declared order. `predictabase` passes
    them to every dbt command as the environment variable PREDICTABASE_DECLARATIONS
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
