{#- Generic test: rows whose column lies outside [min_value, max_value] (NaN counts as outside). -#}
{% test between(model, column_name, min_value, max_value) %}
select * from {{ model }}
where {{ column_name }} is not null
  and (isnan({{ column_name }}) or {{ column_name }} < {{ min_value }} or {{ column_name }} > {{ max_value }})
{% endtest %}
