{#- The contest replays that are built and feed the contest marts: var('duckrate_contest_systems'), by default
  every contest system (as _systems(): the default is also here, and tests/unit/test_registry.py checks both
  lists against the plugin's registry). -#}
{% macro _contest_systems() -%}
  {{ return(var('duckrate_contest_systems', ['elo_mmr'])) }}
{%- endmacro %}
