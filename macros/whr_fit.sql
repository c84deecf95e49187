{#-
  SELECT over the whr_fit table macro (Whole-History Rating: one row per league, player and time step), e.g.
    {{ duckrate.whr_fit(ref('stg_matches'), {'w2': 100}) }}
  renders  select * from whr_fit('"db"."main"."stg_matches"', w2 := 100)
  Parameters default to var('duckrate_whr_params'), then to the macro's own defaults; the time step to
  var('duckrate_history_period') when the parameters name none.
-#}
{% macro whr_fit(relation, params=none) -%}
  {{ duckrate._fit_call('whr_fit', relation, duckrate._history_params(params, 'duckrate_whr_params')) }}
{%- endmacro %}
