{{ config(materialized='view', enabled=duckrate._teams_configured()) }}
-- Every team replay in var('duckrate_team_systems'), tagged with its system: the input of the team marts.
{% for system in duckrate._team_systems() %}
select '{{ system }}' as system, * from {{ ref('replay_' ~ system) }}
{% if not loop.last %}union all by name{% endif %}
{% endfor %}
