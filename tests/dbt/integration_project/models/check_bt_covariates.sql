-- A saturated contextual Bradley-Terry fit in closed form: ann meets bob 10 times with len_diff = +1 (7 wins)
-- and 10 times with -1 (4 wins), so logit(p₊) = Δ + β and logit(p₋) = Δ - β: β = (logit p₊ - logit p₋)/2,
-- θ_ann = Δ/2 (mean zero), and, the model being saturated, the per-game sandwich equals the inverse
-- Hessian: Var β = (1/(10 p₊q₊) + 1/(10 p₋q₋))/4. Rendered through the dbt macro with a list parameter.
with fit as (
    {{ duckrate.bt_fit(ref('styled_battles'), {'covariates': ['len_diff'], 'uncertainty': 'sandwich', 'cluster': 'conversation'}) }}
), closed as (
    select 400 / ln(10) as points, ln(0.7 / 0.3) as logit_plus, ln(0.4 / 0.6) as logit_minus,
           1 / (10 * 0.7 * 0.3) as v_plus, 1 / (10 * 0.4 * 0.6) as v_minus
)
select 'beta' as quantity, f.rating as actual, c.points * (c.logit_plus - c.logit_minus) / 2 as expected
from fit as f, closed as c where f.kind = 'covariate' and f.player = 'len_diff'
union all
select 'beta_sd', f.sd, c.points * sqrt(c.v_plus + c.v_minus) / 2
from fit as f, closed as c where f.kind = 'covariate'
union all
select 'rating_ann', f.rating, 1500 + c.points * (c.logit_plus + c.logit_minus) / 4
from fit as f, closed as c where f.kind = 'player' and f.player = 'ann'
union all
select 'rows', count(*), 3 from fit
