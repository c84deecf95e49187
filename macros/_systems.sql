{#- The replays that are built and feed the marts: var('duckrate_systems'), by default every two-player system. -#}
{% macro _systems() -%}
  {{ return(var('duckrate_systems', ['elo', 'glicko', 'glicko2', 'trueskill', 'chance', 'elo2k', 'pairwise'])) }}
{%- endmacro %}
