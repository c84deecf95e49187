{#- Generated from duckrate's registry by `python -m duckrate.cli generate`: do not edit.
  The contest replays that are built and feed the contest marts: var('duckrate_contest_systems'), or when it is null (the default) every registered one. -#}
{% macro _contest_systems() -%}
  {% set chosen = var('duckrate_contest_systems', none) %}
  {{ return(['elo_mmr', 'codeforces', 'topcoder', 'trueskill_contest', 'glicko_contest', 'bar'] if chosen is none else chosen) }}
{%- endmacro %}
