{#- The whole-history fits built (whr_ratings, ttt_ratings over the matches, shown in rating_history; ttt_team_ratings
  over the team results when they are configured): var('duckrate_history_fits'), or when it is null (the default)
  all three. A project whose matches hold fractional scores leaves out ttt_fit: TrueSkill Through Time takes only
  wins, draws and losses. -#}
{% macro _history_fits() -%}
  {% set chosen = var('duckrate_history_fits', none) %}
  {{ return(['whr_fit', 'ttt_fit', 'ttt_team_fit'] if chosen is none else chosen) }}
{%- endmacro %}
