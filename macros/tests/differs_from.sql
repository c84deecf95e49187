{#- Generic test: rows whose column equals another column of the same row (e.g. a self-match). -#}
{% test differs_from(model, column_name, other) %}
select * from {{ model }} where {{ column_name }} = {{ other }}
{% endtest %}
