{{ config(materialized='view') }}
-- Every replay in var('duckrate_systems'), tagged with its system: the input of the marts.
{% for system in duckrate._systems() %}
select '{{ system }}' as system, * from {{ ref('replay_' ~ system) }}
{% if not loop.last %}union all by name{% endif %}
{% endfor %}
