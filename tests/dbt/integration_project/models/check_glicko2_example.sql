-- Glickman's Glicko-2 example (tau 0.5; Glickman, Example of the Glicko-2 system) through glicko2_replay with a
-- player_priors table: r' = 1464.0507, RD' = 151.5165 (published to 4 decimals).
with replay as (
    {{ duckrate.replay('glicko2', ref('glickman_matches'), {'priors': ref('glickman_priors'), 'tau': 0.5}) }}
), player as (
    select if(player_a = 'player', rating_a_after, rating_b_after) as rating,
           if(player_a = 'player', sd_a_after, sd_b_after) as rd
    from replay where 'player' in (player_a, player_b)
)
select distinct 'rating' as quantity, rating as actual, 1464.0507 as expected from player
union all
select distinct 'rd', rd, 151.5165 from player
