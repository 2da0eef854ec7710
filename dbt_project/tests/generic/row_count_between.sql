{#- Fails when the model's row count lies outside [min_value, max_value]. -#}
{% test row_count_between(model, min_value=0, max_value=none) %}
select n_rows
from (select count(*) as n_rows from {{ model }})
where n_rows < {{ min_value }}{% if max_value is not none %} or n_rows > {{ max_value }}{% endif %}
{% endtest %}
