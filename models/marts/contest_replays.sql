{{ config(materialized='view', enabled=duckrate._contests_configured()) }}
-- Every contest replay, tagged with its system: the input of the contest marts.
select 'elo_mmr' as system, * from {{ ref('replay_elo_mmr') }}
