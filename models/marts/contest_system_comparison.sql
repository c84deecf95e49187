-- The Elo-MMR paper's Table 2 (Ebtekar & Liu 2021) on the user's own history: every contest system in
-- var('duckrate_contest_systems'), per league, with contest_metrics' pair inversion and rank deviation (its
-- default: the reference implementation's metric) and how long the system's replay build took.
{{ config(enabled=duckrate._contests_configured()) }}
{%- set systems = duckrate._contest_systems() %}
with builds as (
{%- for system in systems %}
  {%- set replay = ref('replay_' ~ system) %}
  select '{{ system }}' as system, seconds, mode
  from {{ replay.database }}.{{ replay.schema }}.{{ replay.identifier }}__build
  {% if not loop.last %}union all{% endif %}
{%- endfor %}
)
select m.league, m.system, m.pair_inversion, m.rank_deviation, m.n,
       rank() over (partition by m.league order by m.pair_inversion desc) as rank_by_pair_inversion,
       rank() over (partition by m.league order by m.rank_deviation) as rank_by_rank_deviation,
       b.seconds, b.mode as build_mode
from {{ ref('contest_metrics') }} as m
join builds as b on b.system = m.system
order by m.league nulls first, m.pair_inversion desc, m.system
