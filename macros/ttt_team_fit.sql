{#-
  SELECT over the ttt_team_fit table macro (TrueSkill Through Time of team results: one row per league, player
  and time step), e.g.
    {{ duckrate.ttt_team_fit(ref('stg_team_results'), {'p_draw': 0.1}) }}
  renders  select * from ttt_team_fit('"db"."main"."stg_team_results"', p_draw := 0.1)
  Parameters default to var('duckrate_ttt_params'), then to the macro's own defaults; the time step to
  var('duckrate_history_period') when the parameters name none.
-#}
{% macro ttt_team_fit(relation, params=none) -%}
  {{ duckrate._fit_call('ttt_team_fit', relation, duckrate._history_params(params, 'duckrate_ttt_params')) }}
{%- endmacro %}
