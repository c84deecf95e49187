{#-
  SELECT over one of duckrate's replay table macros, e.g.
    {{ duckrate.replay('elo', ref('stg_matches'), {'k': 24}) }}
  renders  select * from elo_replay('"db"."main"."stg_matches"', k := 24)
  Parameters default to var('duckrate_params')[system], then to the macro's own defaults.
-#}
{% macro replay(system, relation, params=none) -%}
  {%- set given = params if params is not none else var('duckrate_params', {}).get(system, {}) -%}
  select * from {{ system }}_replay({{ duckrate._relation_literal(relation) }}
  {%- for name, value in given.items() %}, {{ name }} := {{ duckrate._sql_literal(value) }}{% endfor %})
{%- endmacro %}
