{#- Fails on rows where `expression` is not TRUE (NULL counts as failure unless
    the expression handles it). -#}
{% test expression_is_true(model, expression) %}
select *
from {{ model }}
where not coalesce(({{ expression }}), false)
{% endtest %}
