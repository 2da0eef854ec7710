{#- Fails when the model's row count lies outside [min_value, max_value]; with or_empty, an empty model passes too
    (a mart whose input an ingest job writes, built before that job has run). -#}
{% test row_count_between(model, min_value=0, max_value=none, or_empty=false) %}
select n_rows
from (select count(*) as n_rows from {{ model }})
where (n_rows < {{ min_value }}{% if max_value is not none %} or n_rows > {{ max_value }}{% endif %})
{%- if or_empty %} and n_rows > 0{% endif %}
{% endtest %}
