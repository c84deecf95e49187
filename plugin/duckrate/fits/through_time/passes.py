"""Message passing over one league's history: the initial forward pass, then forward-backward sweeps to
convergence, on the arrays of :mod:`.layout`.

Each skill slot ``s`` (a player at one time step) keeps three Gaussian messages in natural parameters
(``tau = mu / sigma^2``, ``pi = 1 / sigma^2``), so that products and quotients of Gaussians are sums and
differences (Landfried & Mocskos, the Gaussian product and quotient):

- ``forward``: the prior for a player's first slot, else the previous slot's ``forward * likelihood`` with
  its variance grown by the drift ``gamma^2 t`` over the ``t`` steps between them (Dangauthier et al. 2007,
  the skill dynamics; Landfried & Mocskos, the forward and backward messages);
- ``backward``: the next slot's ``likelihood * backward``, grown by ``gamma^2 t`` the same way; uniform for
  a player's last slot;
- ``likelihood``: the product of the messages of the slot's games (:mod:`.game`), each game's own
  message kept per game member (a player of one of its teams), so that a game sees its players' beliefs
  without itself (the ``within_prior``: ``forward * backward * likelihood / own message``).

The posterior of a slot is ``forward * backward * likelihood``. The schedule is the package's
(``trueskillthroughtime`` 1.1.0, ``History``): the initial pass walks the batches in time order, taking
each batch's forward messages and updating its games once, in order; each later iteration is a backward
sweep (batches ``n-2 .. 0``: new backward messages, one pass over the batch's games) then a forward sweep
(batches ``1 .. n-1``: new forward messages, one pass), and its step is the largest change of any
posterior's mean or sd across the sweep. Iterations stop when both are at most ``epsilon`` or after
``iterations``. A history of one batch has no sweeps: each iteration runs that batch's games to their own
convergence instead (at most 20 passes, to 1e-6, as the package's ``Batch.convergence``).

Coarse correction (``accelerate``, on by default): on a long history the sweeps converge slowly along a few
directions: the level of the skills over time, which only the players' priors pin (a game's and a drift's
forces on their two skills cancel). After each iteration every skill is shifted by a piecewise linear
function of its batch (hat functions on :data:`LEVEL_BLOCKS` nodes spread evenly over the batches), the one
that cancels the forces left on the nodes (:func:`_level_shifts`: a Galerkin correction, a small positive
definite system whose matrix, :func:`level_matrix`, depends on the layout alone and is factored once by
Cholesky), by moving the means of every message but the priors (:func:`_shift`). Those forces are zero at
the fixed point, so the fixed point is the package's. Measured on 50-year histories (to a step of 1e-6):
200k games of 20k players, 16 iterations (4.3e-7 from the fixed point) where the package's schedule takes
359 (and stops 3.8e-5 from it); 1M games of 10k players, 13; 10M games of 100k players, 14. Shifts
constant over blocks of batches took 20, 56 and 59: with many games per player the error left is smooth in
time but not constant over a block, which the hat functions follow (1,024 nodes instead of 256 saved no
iteration). With ``accelerate`` false the schedule is the package's, iteration by iteration.

Threads: a batch's update reads only its own slots and, through the forward or backward messages, the
slots of its players' previous or next batches. So batches are dealt to threads in turn (batch ``b`` to
thread ``b % threads``), and each thread, before a batch, waits until the batches it reads are through the
current phase (:func:`_sweeps`): every batch sees what the one-thread schedule shows it, and the result
is the same to the bit on any number of threads. Measured on 2 quiet cores, 200k games of 20k players
over 50 years (18k batches): 30 iterations in 1.83 s on one thread, 0.96 s on two. Where players meet
again within a few batches the threads mostly wait, and on cores busy with other work spinning costs
time (the waits yield the core after a while).
"""

from __future__ import annotations

import math
import threading

import numba
import numpy as np

from duckrate.core.jit import inlined_kernel, kernel
from duckrate.core.sync import store_release, wait_until
from duckrate.fits.through_time.game import (
    PLAYERS,
    PRIOR_MU,
    PRIOR_VAR,
    RANK,
    TEAM,
    TEAM_COLUMNS,
    difference_message,
    sort_teams,
    team_likelihoods,
    team_margin,
    team_message,
)
from duckrate.fits.through_time.layout import Layout, members_of, teams_of
from duckrate.systems.numerics import cholesky_factor, cholesky_substitute

# columns of the per-slot state
FWD_TAU, FWD_PI, LIK_TAU, LIK_PI, BACK_TAU, BACK_PI = 0, 1, 2, 3, 4, 5
# a one-batch history: each iteration runs the batch to this step, at most this many passes (the package's
# Batch.convergence defaults)
BATCH_EPSILON = 1e-6
BATCH_ITERATIONS = 20
#: The coarse correction's nodes, spread evenly over the batches (at most this many; one without drift).
LEVEL_BLOCKS = 256


@inlined_kernel
def _forget(tau, pi, drift):
    """(tau, pi) of ``N(mu, sigma^2 + drift)`` for ``N(mu, sigma^2)`` given as ``(tau, pi)``; uniform stays
    uniform."""
    if not pi > 0.0:
        return 0.0, 0.0
    shrink = 1.0 / (1.0 + pi * drift)  # sigma^2 / (sigma^2 + drift)
    return tau * shrink, pi * shrink


@inlined_kernel
def _gather(lo, hi, slot_link, state, tau_a, tau_b, pi_a, pi_b, linked):
    """For slots ``lo .. hi - 1`` (one batch), their linked slots' ``(tau_a + tau_b, pi_a + pi_b)`` (state
    columns) into ``linked``, in a loop that does nothing else: the linked slots (a player's previous or next)
    are scattered over the state, and so the processor has many of those reads in flight at once (measured on
    10M games: a forward pass's messages in 0.14 s instead of 0.6 s). A slot without one reads itself."""
    for s in range(lo, hi):
        n = slot_link[s] if slot_link[s] >= 0 else s
        linked[s - lo, 0] = state[n, tau_a] + state[n, tau_b]
        linked[s - lo, 1] = state[n, pi_a] + state[n, pi_b]


@inlined_kernel
def forward_batch(b, batch_slots, state, slot_prev, slot_player, slot_elapsed, prior_tau, prior_pi, gamma2, linked):
    """The forward message of every slot of batch ``b``: the prior at a player's first slot, else the previous
    slot's ``forward * likelihood`` grown by the drift over the steps between them; from the previous slots'
    messages gathered first (:func:`_gather`; ``linked``: at least a row per slot of the batch)."""
    lo = batch_slots[b]
    _gather(lo, batch_slots[b + 1], slot_prev, state, FWD_TAU, LIK_TAU, FWD_PI, LIK_PI, linked)
    for s in range(lo, batch_slots[b + 1]):
        if slot_prev[s] < 0:
            state[s, FWD_TAU] = prior_tau[slot_player[s]]
            state[s, FWD_PI] = prior_pi[slot_player[s]]
        else:
            tau, pi = _forget(linked[s - lo, 0], linked[s - lo, 1], gamma2 * slot_elapsed[s])
            state[s, FWD_TAU] = tau
            state[s, FWD_PI] = pi


@inlined_kernel
def _backward_batch(b, batch_slots, state, slot_next, slot_elapsed, gamma2, linked):
    """The backward message of every slot of batch ``b``: its player's next slot's ``likelihood * backward``
    grown by the drift over the steps between them, uniform for a player's last slot; from the next slots'
    messages gathered first (:func:`_gather`)."""
    lo = batch_slots[b]
    _gather(lo, batch_slots[b + 1], slot_next, state, LIK_TAU, BACK_TAU, LIK_PI, BACK_PI, linked)
    for s in range(lo, batch_slots[b + 1]):
        n = slot_next[s]
        if n < 0:
            state[s, BACK_TAU] = 0.0
            state[s, BACK_PI] = 0.0
        else:
            tau, pi = _forget(linked[s - lo, 0], linked[s - lo, 1], gamma2 * slot_elapsed[n])
            state[s, BACK_TAU] = tau
            state[s, BACK_PI] = pi


@inlined_kernel
def posterior(state, s):
    """(mu, sigma) of slot ``s``'s posterior ``likelihood * backward * forward``."""
    pi = state[s, LIK_PI] + state[s, BACK_PI] + state[s, FWD_PI]
    tau = state[s, LIK_TAU] + state[s, BACK_TAU] + state[s, FWD_TAU]
    variance = 1.0 / pi
    return tau * variance, math.sqrt(variance)


@inlined_kernel
def _cavity(state, message, m, s):
    """(mu, var) of slot ``s``'s belief without member ``m``'s message (the package's ``within_prior``)."""
    tau = state[s, LIK_TAU] + state[s, BACK_TAU] + state[s, FWD_TAU] - message[m, 0]
    pi = state[s, LIK_PI] + state[s, BACK_PI] + state[s, FWD_PI] - message[m, 1]
    var = 1.0 / pi
    return tau * var, var


@inlined_kernel
def _send(state, message, m, s, tau, pi):
    """Member ``m``'s new message ``(tau, pi)`` to slot ``s``, in place of its old one."""
    state[s, LIK_TAU] = (state[s, LIK_TAU] - message[m, 0]) + tau
    state[s, LIK_PI] = (state[s, LIK_PI] - message[m, 1]) + pi
    message[m, 0] = tau
    message[m, 1] = pi


@inlined_kernel
def two_player_pass(g, team_rank, member_slot, state, message, beta2, margin):
    """Game ``g`` of a matches layout (members ``2g``, side A, and ``2g + 1``, each its own team): the same
    numbers as :func:`game_pass`, without its per-team rows. :func:`batch_pass` runs a matches layout's games
    through this alone: with the general path in the same loop the sweeps took a third longer (measured on
    the tennis-sized history: 1.33 s instead of 1.02 s)."""
    ma = 2 * g
    mb = ma + 1
    sa = member_slot[ma]
    sb = member_slot[mb]
    mu_a, var_a = _cavity(state, message, ma, sa)
    mu_b, var_b = _cavity(state, message, mb, sb)
    perf_a = var_a + beta2
    perf_b = var_b + beta2
    b_wins = team_rank[mb] < team_rank[ma]  # side A first when they tie
    var_d = perf_b + perf_a if b_wins else perf_a + perf_b
    shift, theta2 = difference_message(
        mu_b - mu_a if b_wins else mu_a - mu_b, var_d, team_margin(margin, 2), team_rank[ma] == team_rank[mb]
    )
    if theta2 == math.inf:  # the game tells nothing
        _send(state, message, ma, sa, 0.0, 0.0)
        _send(state, message, mb, sb, 0.0, 0.0)
        return
    sign_a = -shift if b_wins else shift
    pi_a = 1.0 / (theta2 + var_d - var_a)
    pi_b = 1.0 / (theta2 + var_d - var_b)
    _send(state, message, ma, sa, (mu_a + sign_a) * pi_a, pi_a)
    _send(state, message, mb, sb, (mu_b - sign_a) * pi_b, pi_b)


@inlined_kernel
def game_pass(g, game_teams, team_members, team_rank, member_slot, member_weight, state, message, beta2, margin, work):
    """Game ``g``'s messages to its players from their beliefs without it (:mod:`.game`): two teams without
    partial play in closed form (two players: the package's two-player game), else the chain of the teams'
    differences iterated (``work``: one row per team, :data:`~.game.TEAM_COLUMNS` columns)."""
    t_lo, t_hi = teams_of(g, game_teams)
    weighted = member_weight.shape[0] > 0
    partial = False
    for t in range(t_lo, t_hi):  # each team's performance without the game
        m_lo, m_hi = members_of(t, team_members)
        team_mu = 0.0
        team_var = 0.0
        for m in range(m_lo, m_hi):
            mu, var = _cavity(state, message, m, member_slot[m])
            if weighted and member_weight[m] != 1.0:
                w = member_weight[m]
                team_mu += w * mu
                team_var += w * w * (var + beta2)
                partial = True
            else:
                team_mu += mu
                team_var += var + beta2
        work[t - t_lo, PRIOR_MU] = team_mu
        work[t - t_lo, PRIOR_VAR] = team_var
        work[t - t_lo, PLAYERS] = m_hi - m_lo
        work[t - t_lo, RANK] = team_rank[t]
        work[t - t_lo, TEAM] = t
    if t_hi - t_lo == 2 and not partial:
        winner = 1 if team_rank[t_lo + 1] < team_rank[t_lo] else 0  # the first team when they tie
        loser = 1 - winner
        var_d = work[winner, PRIOR_VAR] + work[loser, PRIOR_VAR]
        shift, theta2 = difference_message(
            work[winner, PRIOR_MU] - work[loser, PRIOR_MU],
            var_d,
            team_margin(margin, int(work[0, PLAYERS] + work[1, PLAYERS])),
            team_rank[t_lo] == team_rank[t_lo + 1],
        )
        for t in range(t_lo, t_hi):
            sign = shift if t - t_lo == winner else -shift
            m_lo, m_hi = members_of(t, team_members)
            for m in range(m_lo, m_hi):
                s = member_slot[m]
                if theta2 == math.inf:  # the game tells nothing
                    _send(state, message, m, s, 0.0, 0.0)
                    continue
                mu, var = _cavity(state, message, m, s)
                pi = 1.0 / (theta2 + var_d - var)
                _send(state, message, m, s, (mu + sign) * pi, pi)
        return
    _teams_pass(t_hi - t_lo, team_members, member_slot, member_weight, state, message, margin, work)


@kernel
def _teams_pass(n_teams, team_members, member_slot, member_weight, state, message, margin, work):
    """:func:`game_pass` for a game of more than two teams or with partial play, its teams' performances in
    ``work``: the chain of differences iterated (:func:`.game.team_likelihoods`), then each member's message.
    Not inlined: :func:`game_pass` is inlined at every call site of the sweeps, and this path inlined there
    too took numba minutes to compile (measured: ``ttt_fit``'s first call 127 s, 26 s without it)."""
    weighted = member_weight.shape[0] > 0
    sort_teams(work, n_teams)
    team_likelihoods(work, n_teams, margin)
    for e in range(n_teams):
        m_lo, m_hi = members_of(int(work[e, TEAM]), team_members)
        for m in range(m_lo, m_hi):
            s = member_slot[m]
            mu, var = _cavity(state, message, m, s)
            tau, pi = team_message(work, e, mu, var, member_weight[m] if weighted else 1.0)
            _send(state, message, m, s, tau, pi)


@inlined_kernel
def batch_pass(
    b, batch_games, game_teams, team_members, team_rank, member_slot, member_weight, state, message, beta2, margin, work
):
    """One pass over batch ``b``'s games in order: each game's messages from its players' beliefs without it
    (the package's ``Batch.iteration``). ``message`` holds each member's message (tau, pi)."""
    if game_teams.shape[0] == 0:  # a matches layout: the two-player loop alone (see two_player_pass)
        for g in range(batch_games[b], batch_games[b + 1]):
            two_player_pass(g, team_rank, member_slot, state, message, beta2, margin)
        return
    for g in range(batch_games[b], batch_games[b + 1]):
        game_pass(
            g, game_teams, team_members, team_rank, member_slot, member_weight, state, message, beta2, margin, work
        )


@inlined_kernel
def _remember(b, batch_slots, state, mu, sigma):
    for s in range(batch_slots[b], batch_slots[b + 1]):
        mu[s], sigma[s] = posterior(state, s)


@inlined_kernel
def _change(b, batch_slots, state, mu, sigma, step_mu, step_sigma):
    """The largest change of batch ``b``'s posteriors since :func:`_remember`, folded into the step; the
    new posteriors replace the remembered ones."""
    for s in range(batch_slots[b], batch_slots[b + 1]):
        new_mu, new_sigma = posterior(state, s)
        step_mu = max(step_mu, abs(mu[s] - new_mu))
        step_sigma = max(step_sigma, abs(sigma[s] - new_sigma))
        mu[s] = new_mu
        sigma[s] = new_sigma
    return step_mu, step_sigma


@inlined_kernel
def _pull_hat(force, k, wk, pull):
    """A force ``pull`` on a skill of a batch on the hat functions ``(k, 1 - wk), (k + 1, wk)``: ``pull phi``."""
    force[k] += pull * (1.0 - wk)
    if wk > 0.0:
        force[k + 1] += pull * wk


@inlined_kernel
def _weigh_hat(matrix, k, wk, weight):
    """A precision ``weight`` on a skill of a batch on the hat functions ``(k, 1 - wk), (k + 1, wk)``:
    ``weight phi phi^T``."""
    matrix[k, k] += weight * (1.0 - wk) * (1.0 - wk)
    if wk > 0.0:
        matrix[k, k + 1] += weight * (1.0 - wk) * wk
        matrix[k + 1, k] += weight * (1.0 - wk) * wk
        matrix[k + 1, k + 1] += weight * wk * wk


@inlined_kernel
def _weigh_link(matrix, k, wk, j, wj, weight):
    """A drift link of precision ``weight`` between a skill on the hat functions ``(k, 1 - wk), (k + 1, wk)``
    and its previous skill on ``(j, 1 - wj), (j + 1, wj)``: ``weight d d^T``, ``d = phi_k - phi_j``."""
    _weigh_hat(matrix, k, wk, weight)
    _weigh_hat(matrix, j, wj, weight)
    for a in range(2):  # the cross terms -weight (phi_k phi_j^T + phi_j phi_k^T)
        fa = (1.0 - wk) if a == 0 else wk
        for c in range(2):
            fc = (1.0 - wj) if c == 0 else wj
            if fa != 0.0 and fc != 0.0:
                matrix[k + a, j + c] -= weight * fa * fc
                matrix[j + c, k + a] -= weight * fa * fc


@kernel
def level_matrix(
    slot_prev, slot_player, slot_elapsed, slot_batch, batch_node, batch_weight, n_blocks, prior_pi, gamma2
):
    """The coarse correction's matrix ``A`` but for uneven games' terms (see :func:`_level_shifts`): on the hat
    functions, the first skills' prior precisions ``pi0 phi phi^T`` and each drift link's ``w d d^T`` (``w =
    1 / (gamma^2 t)``, ``d`` the difference of its two skills' hat values). It depends on the layout alone:
    built once per fit."""
    matrix = np.zeros((n_blocks, n_blocks))
    if n_blocks == 0:  # no coarse correction
        return matrix
    for s in range(slot_prev.shape[0]):
        b = slot_batch[s]
        p = slot_prev[s]
        if p < 0:
            _weigh_hat(matrix, batch_node[b], batch_weight[b], prior_pi[slot_player[s]])
            continue
        bp = slot_batch[p]
        if batch_node[bp] != batch_node[b] or batch_weight[bp] != batch_weight[b]:
            w = 1.0 / (gamma2 * slot_elapsed[s])
            _weigh_link(matrix, batch_node[b], batch_weight[b], batch_node[bp], batch_weight[bp], w)
    return matrix


@kernel
def _level_shifts(
    slot_prev,
    slot_player,
    slot_elapsed,
    slot_batch,
    batch_node,
    batch_weight,
    matrix,
    factored,
    prior_tau,
    prior_pi,
    gamma2,
    mu,
    uneven,
    game_teams,
    team_members,
    member_slot,
    message,
):
    """The coarse correction: the shift ``c(t)`` of every skill at time ``t``, a piecewise linear function of
    the batch (hat functions on nodes equally spaced in batches: batch ``b`` is ``(1 - w) c_k + w c_{k+1}``,
    ``k = batch_node[b]``, ``w = batch_weight[b]``), that best cancels the forces left on the skills (a
    Galerkin correction). The posterior means ``mu`` leave on each skill its prior force ``pi0 (mu0 - mu)``
    (a player's first) and the drift forces ``(mu' - mu) / (gamma^2 t)`` of its links to its player's
    previous and next skills; a game's forces on its players cancel when its teams weigh the same, the game
    then being unchanged by a shift common to its batch. Every sum is zero at the fixed point. Shifting by
    ``c`` changes the forces on the nodes by ``-A c`` (:func:`level_matrix`): ``c`` solves ``A c = force``.
    A game whose teams weigh differently (``uneven``: their players' weights sum to different totals, e.g.
    two players against one) is pinned by the level itself: its messages stay where they are in the shift,
    as observations, adding their forces ``tau - pi mu`` and precisions ``pi`` to their skill's; ``A`` is then
    ``matrix`` plus those, factored here, else ``factored`` (``matrix``'s Cholesky factor)."""
    n_blocks = matrix.shape[0]
    force = np.zeros(n_blocks)
    for s in range(slot_prev.shape[0]):
        b = slot_batch[s]
        p = slot_prev[s]
        if p < 0:
            pi = prior_pi[slot_player[s]]
            _pull_hat(force, batch_node[b], batch_weight[b], prior_tau[slot_player[s]] - pi * mu[s])
            continue
        bp = slot_batch[p]
        if batch_node[bp] != batch_node[b] or batch_weight[bp] != batch_weight[b]:
            pull = (mu[p] - mu[s]) / (gamma2 * slot_elapsed[s])
            _pull_hat(force, batch_node[b], batch_weight[b], pull)
            _pull_hat(force, batch_node[bp], batch_weight[bp], -pull)
    c = np.empty(n_blocks)
    if uneven.shape[0] == 0:
        cholesky_substitute(factored, force, c)
        return c
    system = matrix.copy()
    for g in uneven:
        t_lo, t_hi = teams_of(g, game_teams)
        for t in range(t_lo, t_hi):
            m_lo, m_hi = members_of(t, team_members)
            for m in range(m_lo, m_hi):
                s = member_slot[m]
                b = slot_batch[s]
                pi = message[m, 1]
                _pull_hat(force, batch_node[b], batch_weight[b], message[m, 0] - pi * mu[s])
                _weigh_hat(system, batch_node[b], batch_weight[b], pi)
    cholesky_factor(system)
    cholesky_substitute(system, force, c)
    return c


@inlined_kernel
def _shift(
    b, batch_slots, batch_games, slot_prev, state, message, c, game_teams, team_members, member_slot, game_uneven
):
    """Move batch ``b``'s messages (but the priors and those of uneven games) by ``c``: each Gaussian's mean,
    not its precision (its skills' posteriors move by ``c``, a first skill's a little less)."""
    for s in range(batch_slots[b], batch_slots[b + 1]):
        if slot_prev[s] >= 0:
            state[s, FWD_TAU] += c * state[s, FWD_PI]
        state[s, BACK_TAU] += c * state[s, BACK_PI]
        state[s, LIK_TAU] += c * state[s, LIK_PI]
    for g in range(batch_games[b], batch_games[b + 1]):
        t_lo, t_hi = teams_of(g, game_teams)
        m_lo = members_of(t_lo, team_members)[0]
        m_hi = members_of(t_hi - 1, team_members)[1]
        if game_uneven.shape[0] > 0 and game_uneven[g]:
            for m in range(m_lo, m_hi):  # the game's messages stay: take them out of the likelihood's shift
                state[member_slot[m], LIK_TAU] -= c * message[m, 1]
            continue
        for m in range(m_lo, m_hi):
            message[m, 0] += c * message[m, 1]


@inlined_kernel
def _wait_neighbours(b, batch_slots, slot_link, slot_batch, flags, phase):
    """Wait until the batches holding the linked slots (``slot_link``: next or previous) of batch ``b``'s
    players have done ``phase`` (``flags[batch]``); False if another thread failed (the last flag). On one
    thread there is nothing to wait for, and the sweeps skip it (its reads are scattered)."""
    abort = flags.shape[0] - 1
    for s in range(batch_slots[b], batch_slots[b + 1]):
        linked = slot_link[s]
        if linked >= 0 and not wait_until(flags, slot_batch[linked], phase, abort):
            return False
    return True


@kernel
def _sweeps(
    thread,
    threads,
    batch_games,
    batch_slots,
    game_teams,
    team_members,
    team_rank,
    member_slot,
    member_weight,
    game_uneven,
    uneven,
    max_teams,
    max_batch_slots,
    slot_player,
    slot_batch,
    slot_prev,
    slot_next,
    slot_elapsed,
    prior_tau,
    prior_pi,
    beta2,
    gamma2,
    margin,
    epsilon,
    iterations,
    batch_node,
    batch_weight,
    level,
    level_factor,
    first_new,
    state,
    message,
    mu,
    sigma,
    flags,
    steps,
):
    """Thread ``thread`` of ``threads``' share of the fit: the batches ``b`` with ``b % threads == thread``,
    in every pass. Phases are numbered 1 (the initial pass), then 2i + 2 and 2i + 3 (iteration i's backward
    and forward sweeps); ``done[b]`` is the last phase batch ``b`` went through. A batch waits until the
    batches it reads (its players' previous batches going forward, next going backward) are through the
    phase: then it reads exactly what the one-thread schedule gives it, and no batch it reads from is still
    read in the phase before. ``flags`` holds ``done`` (one per batch), then one arrival counter per thread,
    then a second one per thread (the coarse correction's barrier), then the abort flag: an iteration ends
    at a barrier, where each thread's largest change (``steps``, one pair per thread, two iterations' worth)
    makes the step every thread stops on; with the coarse correction, every thread computes the same shifts
    from ``mu``, waits at the second barrier until all have, and shifts its own batches. The batches before
    ``first_new`` have had their initial pass already (a warm start: their messages are in ``state`` and
    ``message``), so the initial pass only notes their posteriors.
    Returns ``(iterations run, step_mu, step_sigma, ok)``; ``ok`` False if another thread failed."""
    n_batches = batch_games.shape[0] - 1
    n_blocks = level.shape[0]
    abort = flags.shape[0] - 1
    done = flags  # the first n_batches flags
    work = np.empty((max_teams, TEAM_COLUMNS))  # this thread's scratch for a game's teams
    linked = np.empty((max_batch_slots, 2))  # and for a batch's previous or next messages
    for b in range(thread, n_batches, threads):
        if b >= first_new:
            if threads > 1 and not _wait_neighbours(b, batch_slots, slot_prev, slot_batch, done, 1):
                return 0, np.inf, np.inf, False
            forward_batch(
                b, batch_slots, state, slot_prev, slot_player, slot_elapsed, prior_tau, prior_pi, gamma2, linked
            )
            batch_pass(
                b,
                batch_games,
                game_teams,
                team_members,
                team_rank,
                member_slot,
                member_weight,
                state,
                message,
                beta2,
                margin,
                work,
            )
        _remember(b, batch_slots, state, mu, sigma)
        store_release(done, b, 1)

    step_mu = np.inf
    step_sigma = np.inf
    run = 0
    while (step_mu > epsilon or step_sigma > epsilon) and run < iterations:
        local_mu = 0.0
        local_sigma = 0.0
        if n_batches == 1:  # threads == 1 here
            start_mu = mu[batch_slots[0] : batch_slots[1]].copy()
            start_sigma = sigma[batch_slots[0] : batch_slots[1]].copy()
            inner_mu = np.inf
            inner_sigma = np.inf
            passes = 0
            while (inner_mu > BATCH_EPSILON or inner_sigma > BATCH_EPSILON) and passes < BATCH_ITERATIONS:
                batch_pass(
                    0,
                    batch_games,
                    game_teams,
                    team_members,
                    team_rank,
                    member_slot,
                    member_weight,
                    state,
                    message,
                    beta2,
                    margin,
                    work,
                )
                inner_mu, inner_sigma = _change(0, batch_slots, state, mu, sigma, 0.0, 0.0)
                passes += 1
            for k in range(start_mu.shape[0]):
                local_mu = max(local_mu, abs(start_mu[k] - mu[batch_slots[0] + k]))
                local_sigma = max(local_sigma, abs(start_sigma[k] - sigma[batch_slots[0] + k]))
        else:
            backward = 2 * run + 2
            last = n_batches - 1
            for b in range(last - (last - thread) % threads, -1, -threads):
                if b == last:  # the last batch has nothing after it: through the phase at once
                    store_release(done, b, backward)
                    continue
                if threads > 1 and not _wait_neighbours(b, batch_slots, slot_next, slot_batch, done, backward):
                    return run, np.inf, np.inf, False
                _backward_batch(b, batch_slots, state, slot_next, slot_elapsed, gamma2, linked)
                batch_pass(
                    b,
                    batch_games,
                    game_teams,
                    team_members,
                    team_rank,
                    member_slot,
                    member_weight,
                    state,
                    message,
                    beta2,
                    margin,
                    work,
                )
                local_mu, local_sigma = _change(b, batch_slots, state, mu, sigma, local_mu, local_sigma)
                store_release(done, b, backward)
            forward = backward + 1
            for b in range(thread, n_batches, threads):
                if b == 0:  # the first batch has nothing before it
                    store_release(done, b, forward)
                    continue
                if threads > 1 and not _wait_neighbours(b, batch_slots, slot_prev, slot_batch, done, forward):
                    return run, np.inf, np.inf, False
                forward_batch(
                    b, batch_slots, state, slot_prev, slot_player, slot_elapsed, prior_tau, prior_pi, gamma2, linked
                )
                batch_pass(
                    b,
                    batch_games,
                    game_teams,
                    team_members,
                    team_rank,
                    member_slot,
                    member_weight,
                    state,
                    message,
                    beta2,
                    margin,
                    work,
                )
                local_mu, local_sigma = _change(b, batch_slots, state, mu, sigma, local_mu, local_sigma)
                store_release(done, b, forward)
        # the barrier: every thread's change of this iteration, then the same step for all
        steps[run % 2, thread, 0] = local_mu
        steps[run % 2, thread, 1] = local_sigma
        store_release(flags, n_batches + thread, run + 1)
        step_mu = 0.0
        step_sigma = 0.0
        for other in range(threads):
            if not wait_until(flags, n_batches + other, run + 1, abort):
                return run, np.inf, np.inf, False
            step_mu = max(step_mu, steps[run % 2, other, 0])
            step_sigma = max(step_sigma, steps[run % 2, other, 1])
        run += 1
        if n_blocks > 0 and n_batches > 1 and (step_mu > epsilon or step_sigma > epsilon) and run < iterations:
            c = _level_shifts(
                slot_prev,
                slot_player,
                slot_elapsed,
                slot_batch,
                batch_node,
                batch_weight,
                level,
                level_factor,
                prior_tau,
                prior_pi,
                gamma2,
                mu,
                uneven,
                game_teams,
                team_members,
                member_slot,
                message,
            )
            # a second barrier: no thread's next sweep changes mu before every thread has read it
            store_release(flags, n_batches + threads + thread, run)
            for other in range(threads):
                if not wait_until(flags, n_batches + threads + other, run, abort):
                    return run, np.inf, np.inf, False
            for b in range(thread, n_batches, threads):
                _shift(
                    b,
                    batch_slots,
                    batch_games,
                    slot_prev,
                    state,
                    message,
                    c[batch_node[b]] * (1.0 - batch_weight[b])
                    + c[min(batch_node[b] + 1, n_blocks - 1)] * batch_weight[b],
                    game_teams,
                    team_members,
                    member_slot,
                    game_uneven,
                )
    return run, step_mu, step_sigma, True


#: Fewer games than this are fitted on one thread (starting threads costs more than it saves).
THREADED_MIN_GAMES = 4096
#: More than this share of batches reading a batch of another thread right beside them (players meeting again
#: in the next batches) and the threads would mostly wait: one thread. Measured on 2 quiet cores: a share of
#: 0.99 (20k games of 1k players in 500 batches) ran 0.94x as fast on two threads, 0.38 ran 1.6x, 0.03-0.08
#: ran 1.8-2.0x.
THREADED_MAX_NEIGHBOUR_SHARE = 0.5


def _neighbour_share(layout: Layout, slot_batch: np.ndarray, threads: int) -> float:
    """The share of batches with a player whose next batch is among the ``threads - 1`` after it (another
    thread's, so one waits for the other)."""
    linked = np.flatnonzero(layout.slot_next >= 0)
    gap = slot_batch[layout.slot_next[linked]] - slot_batch[linked]
    return np.unique(slot_batch[linked[gap < threads]]).size / max(layout.n_batches, 1)


def fit_history(
    layout: Layout,
    prior_mu: np.ndarray,
    prior_sigma: np.ndarray,
    beta: float,
    gamma: float,
    margin: float,
    epsilon: float,
    iterations: int,
    threads: int | None = None,
    accelerate: bool = True,
) -> tuple[np.ndarray, np.ndarray, int, float, float]:
    """Fit one league's history (``prior_mu``, ``prior_sigma`` per player code). Returns ``(mu, sigma,
    iterations, step_mu, step_sigma)``: each slot's posterior mean and sd, the iterations run and the last
    one's step (``inf`` when none ran). ``threads`` (default: numba's thread count; one for a history of one
    batch, under :data:`THREADED_MIN_GAMES` games, or with more than :data:`THREADED_MAX_NEIGHBOUR_SHARE` of
    its batches waiting on the next) changes the time taken, never a bit of the result; ``accelerate``: the
    coarse correction after each iteration (see the module docstring)."""
    prior_pi = 1.0 / (prior_sigma * prior_sigma)
    prior_tau = prior_mu * prior_pi
    state = np.zeros((layout.n_slots, 6), dtype=np.float64)
    message = np.zeros((layout.n_members, 2), dtype=np.float64)
    done, step_mu, step_sigma = run_sweeps(
        layout,
        prior_tau,
        prior_pi,
        beta,
        gamma,
        margin,
        epsilon,
        iterations,
        state,
        message,
        threads=threads,
        accelerate=accelerate,
    )
    mu = np.empty(layout.n_slots, dtype=np.float64)
    sigma = np.empty(layout.n_slots, dtype=np.float64)
    _posteriors(state, mu, sigma)
    return mu, sigma, done, step_mu, step_sigma


def uneven_games(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Per game whether its teams' total weights (their players, or their weights under partial play)
    differ, and the indices of those games; both empty when none do (see :func:`_level_errors`)."""
    none = np.zeros(0, dtype=np.bool_), np.zeros(0, dtype=np.int64)
    if layout.team_members.shape[0] == 0 or layout.n_games == 0:
        return none
    if layout.member_weight.shape[0]:
        team_weight = np.add.reduceat(layout.member_weight, layout.team_members[:-1])
    else:
        team_weight = np.diff(layout.team_members).astype(np.float64)
    starts = layout.game_teams[:-1]
    uneven = np.maximum.reduceat(team_weight, starts) != np.minimum.reduceat(team_weight, starts)
    if not uneven.any():
        return none
    return uneven, np.flatnonzero(uneven).astype(np.int64)


def run_sweeps(
    layout: Layout,
    prior_tau: np.ndarray,
    prior_pi: np.ndarray,
    beta: float,
    gamma: float,
    margin: float,
    epsilon: float,
    iterations: int,
    state: np.ndarray,
    message: np.ndarray,
    first_new: int = 0,
    threads: int | None = None,
    accelerate: bool = True,
) -> tuple[int, float, float]:
    """The message passing of :func:`fit_history` on the messages ``state`` (one row per slot: forward,
        backward, likelihood in natural parameters) and ``message`` (each game member's message (tau, pi), in
    member order: ``n_members x 2``, or any C-contiguous array of those numbers, e.g. ``n_games x 4`` for
    two-player games), updated in place; the
        prior in natural parameters per player code. The warm-start entry point: the batches before
        ``first_new`` keep the messages they hold (a fit of the history up to them, or one that has since had
        batches added after them, as the package's History has when events are added at its end), only the
        later batches get the initial forward pass, and the iterations then run over the whole history.
        Returns ``(iterations, step_mu, step_sigma)``."""
    n_batches, n_slots, n_games = layout.n_batches, layout.n_slots, layout.n_games
    if not message.flags.c_contiguous or message.size != 2 * layout.n_members:
        raise ValueError("run_sweeps: message must be a C-contiguous (tau, pi) per game member")
    message = message.reshape(layout.n_members, 2)  # a view: updated in place
    game_uneven, uneven = uneven_games(layout)
    slot_batch = np.repeat(np.arange(n_batches, dtype=np.int64), np.diff(layout.batch_slots))
    chosen = threads is not None
    if threads is None:
        threads = numba.get_num_threads() if n_games >= THREADED_MIN_GAMES else 1
    threads = max(1, min(int(threads), n_batches // 2)) if n_batches > 1 else 1
    if not chosen and threads > 1 and _neighbour_share(layout, slot_batch, threads) > THREADED_MAX_NEIGHBOUR_SHARE:
        threads = 1
    n_blocks = 0
    if accelerate and n_batches > 1:
        n_blocks = min(LEVEL_BLOCKS, n_batches) if gamma > 0.0 else 1
    position = np.arange(n_batches, dtype=np.float64) * (max(n_blocks, 1) - 1) / max(n_batches - 1, 1)
    batch_node = np.minimum(np.floor(position).astype(np.int64), max(n_blocks - 1, 0))
    batch_weight = position - batch_node
    level = level_matrix(
        layout.slot_prev,
        layout.slot_player,
        layout.slot_elapsed,
        slot_batch,
        batch_node,
        batch_weight,
        n_blocks,
        prior_pi,
        gamma * gamma,
    )
    level_factor = level  # with uneven games the system changes every iteration: factored there
    if uneven.shape[0] == 0 and n_blocks > 0:
        level_factor = level.copy()
        cholesky_factor(level_factor)
    mu = np.empty(n_slots, dtype=np.float64)
    sigma = np.empty(n_slots, dtype=np.float64)
    flags = np.zeros(n_batches + 2 * threads + 1, dtype=np.int64)
    steps = np.zeros((2, threads, 2), dtype=np.float64)
    results: list = [None] * threads
    failures: list[BaseException] = []

    def run(thread: int) -> None:
        try:
            results[thread] = _sweeps(
                thread,
                threads,
                layout.batch_games,
                layout.batch_slots,
                layout.game_teams,
                layout.team_members,
                layout.team_rank,
                layout.member_slot,
                layout.member_weight,
                game_uneven,
                uneven,
                layout.max_teams,
                layout.max_batch_slots,
                layout.slot_player,
                slot_batch,
                layout.slot_prev,
                layout.slot_next,
                layout.slot_elapsed,
                prior_tau,
                prior_pi,
                beta * beta,
                gamma * gamma,
                margin,
                epsilon,
                iterations,
                batch_node,
                batch_weight,
                level,
                level_factor,
                first_new,
                state,
                message,
                mu,
                sigma,
                flags,
                steps,
            )
        except BaseException as error:
            failures.append(error)
            flags[-1] = 1  # the others stop waiting

    workers = [threading.Thread(target=run, args=(thread,)) for thread in range(1, threads)]
    for worker in workers:
        worker.start()
    run(0)
    for worker in workers:
        worker.join()
    if failures:
        raise failures[0]
    done, step_mu, step_sigma, _ = results[0]
    return int(done), float(step_mu), float(step_sigma)


@kernel
def _posteriors(state, mu, sigma):
    for s in range(mu.shape[0]):
        mu[s], sigma[s] = posterior(state, s)
