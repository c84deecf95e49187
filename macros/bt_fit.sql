{#-
  SELECT over the bt_fit table macro (Bradley-Terry fit, one row per league and player), e.g.
    {{ duckrate.bt_fit(ref('stg_matches'), {'prior_sd': 200, 'home_advantage': true}) }}
  renders  select * from bt_fit('"db"."main"."stg_matches"', prior_sd := 200, home_advantage := true)
  Parameters default to var('duckrate_bt_params'), then to the macro's own defaults (plain MLE).
  A priors table is a parameter too: {'prior_sd': 200, 'priors': ref('my_priors')}.
-#}
{% macro bt_fit(relation, params=none) -%}
  {{ duckrate._fit_call('bt_fit', relation, params if params is not none else var('duckrate_bt_params', {})) }}
{%- endmacro %}
