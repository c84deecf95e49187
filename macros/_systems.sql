{#- The replays that are built and feed the marts: var('duckrate_systems'), by default every two-player system.
  The default is also here for models of a user's own project that call the marts' macros (where the package's
  vars are not in scope); tests/unit/test_registry.py checks both lists against the plugin's registry. -#}
{% macro _systems() -%}
  {{ return(var('duckrate_systems', ['elo', 'glicko', 'glicko2', 'trueskill', 'chance', 'elo2k', 'pairwise'])) }}
{%- endmacro %}
