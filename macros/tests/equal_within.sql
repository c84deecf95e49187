{#- Generic test: rows where |column - expected| exceeds tolerance, or exactly one of them is NULL. -#}
{% test equal_within(model, column_name, expected, tolerance=0) %}
select * from {{ model }}
where abs({{ column_name }} - {{ expected }}) > {{ tolerance }}
   or ({{ column_name }} is null) != ({{ expected }} is null)
{% endtest %}
