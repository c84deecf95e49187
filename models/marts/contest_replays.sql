{{ config(materialized='view', enabled=duckrate._contests_configured()) }}
-- Every contest replay in var('duckrate_contest_systems'), tagged with its system: the input of the contest marts.
{% for system in duckrate._contest_systems() %}
select '{{ system }}' as system, * from {{ ref('replay_' ~ system) }}
{% if not loop.last %}union all by name{% endif %}
{% endfor %}
