-- win_probability and win_matrix through the package's dbt macros: Elo's forecast against the logistic of the
-- leaderboard's ratings written out here (replay_elo has advantage 35; 'a' plays in leagues x and y, 'b' and
-- 'c' in x only, so each pair gets league x alone), and the Bradley-Terry matrix's p(a, b) + p(b, a) = 1.
with elo as (
    {{ duckrate.win_probability(ref('replay_elo'), ['a', 'c'], 'b', {'system': 'elo', 'advantage': 35}) }}
), board as (
    select * from {{ ref('leaderboard') }} where system = 'elo'
), bt as (
    {{ duckrate.win_matrix(ref('bt_ratings'), {'top': 3, 'league': 'x'}) }}
)
select 'elo ' || e.league || ' ' || e.player_a || ' v ' || e.player_b as quantity, e.p_win_a as actual,
       1.0 / (1.0 + pow(10.0, (b.rating - a.rating - 35.0) / 400.0)) as expected
from elo as e
join board as a on a.league = e.league and a.player = e.player_a
join board as b on b.league = e.league and b.player = e.player_b
union all
select 'bt ' || m.player_a || ' v ' || m.player_b, m.p_win_a + r.p_win_a, 1.0
from bt as m join bt as r on r.player_a = m.player_b and r.player_b = m.player_a
