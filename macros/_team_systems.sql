{#- Generated from duckrate's registry by `python -m duckrate.cli generate`: do not edit.
  The team replays that are built: var('duckrate_team_systems'), or when it is null (the default) every registered one. -#}
{% macro _team_systems() -%}
  {% set chosen = var('duckrate_team_systems', none) %}
  {{ return(['plackett_luce', 'bradley_terry_full', 'bradley_terry_part', 'thurstone_mosteller_full', 'thurstone_mosteller_part', 'trueskill_teams'] if chosen is none else chosen) }}
{%- endmacro %}
