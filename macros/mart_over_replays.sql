{#-
  A mart over every replay in var('duckrate_systems'), e.g. {{ duckrate.mart_over_replays('leaderboard') }}:
  the union of the mart over each replay model, its rows labelled with the system (system := ...). The
  marts group by league and system, so this equals the mart over the union of the replays (the `replays`
  view), row for row.

  Built with materialized='duckrate_mart', the parts run one replay at a time (see that
  materialization): only one replay table is packed into memory at once, not all of them.
-#}
{% macro mart_over_replays(name, params={}) -%}
  {%- for system in duckrate._systems() %}
    {%- if not loop.first %}{{ duckrate._mart_part_separator() }}{% endif %}
    {%- set part_params = {} -%}
    {%- do part_params.update(params) -%}
    {%- do part_params.update({'system': system}) %}
{{ duckrate.mart(name, ref('replay_' ~ system), part_params) }}
  {%- endfor %}
{%- endmacro %}
