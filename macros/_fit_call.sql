{#-
  SELECT over one of duckrate's batch-fit table macros with the given parameters, e.g.
    {{ duckrate._fit_call('whr_fit', ref('stg_matches'), {'w2': 100}) }}
  renders  select * from whr_fit('"db"."main"."stg_matches"', w2 := 100)
-#}
{% macro _fit_call(name, relation, given) -%}
  select * from {{ name }}({{ duckrate._relation_literal(relation) }}
  {%- for key, value in given.items() %}, {{ key }} := {{ duckrate._sql_literal(value) }}{% endfor %})
{%- endmacro %}
