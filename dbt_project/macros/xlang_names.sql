{#-
  The names people read next to a corpus and a model in the xlang marts (mart_xlang_delta_loglik, mart_link_shape,
  mart_link_curves): `names_ctes()` defines the CTEs corpora (corpus, corpus_title, language) and model_names
  (model_key, model_name, model_family, n_parameters); join them with
  `inner join corpora as c using (corpus) left join model_names as m using (model_key)`.
-#}
{% macro names_ctes() -%}
corpora as (
    select corpus, title as corpus_title, language from {{ ref('stg_corpora') }}
),

model_names as (
    select model_key, display_name as model_name, family as model_family, n_parameters
    from {{ ref('stg_model_table') }}
)
{%- endmacro %}
