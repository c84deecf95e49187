{#- Generated from duckrate's registry by `python -m duckrate.cli generate`: do not edit.
  The two-player replays that are built and feed the marts: var('duckrate_systems'), or when it is null (the default) every registered one. -#}
{% macro _systems() -%}
  {% set chosen = var('duckrate_systems', none) %}
  {{ return(['elo', 'glicko', 'glicko2', 'trueskill', 'chance', 'elo2k', 'pairwise', 'whr', 'ttt'] if chosen is none else chosen) }}
{%- endmacro %}
