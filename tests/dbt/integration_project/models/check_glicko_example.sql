-- Glickman's worked example (one rating period, three games; Glickman 1999) through
-- glicko_replay with a player_priors table: r' = 1464.106, RD' = 151.399 (published to 3 decimals).
with replay as (
    {{ duckrate.replay('glicko', ref('glickman_matches'), {'priors': ref('glickman_priors')}) }}
), player as (
    select if(player_a = 'player', rating_a_after, rating_b_after) as rating,
           if(player_a = 'player', sd_a_after, sd_b_after) as rd
    from replay where 'player' in (player_a, player_b)
)
select distinct 'rating' as quantity, rating as actual, 1464.106 as expected from player
union all
select distinct 'rd', rd, 151.399 from player
