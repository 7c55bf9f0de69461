#!/usr/bin/env python3
"""Sync at scale, by simulation: C clones of one repository sharing one remote through `git mas sync`.

A seeded, deterministic discrete-event simulation (python3 standard library only) of
`src/sync.rs`'s round loop. It first replays the measured six-clone `git daemon` run
(`bench/sync-contention.sh`) and prints model against measurement; then it runs 1,000 agents over
100 clones against one hosted remote and sweeps the sync interval and the shared-chain write
rate to find where it saturates.

    python3 bench/sync-sim.py                       # calibration, then the 1,000-agent sweeps
    python3 bench/sync-sim.py --only hosted --intervals 10,5,2 --sweeps interval --json
    python3 bench/sync-sim.py --only hosted --sweeps agents --agent-counts 500,1000,2000
    python3 bench/sync-sim.py --only calibration --fit   # re-fit the one free parameter

The model
---------
* **A sync** (`sync::sync`) is a fixed cost, then rounds. A round is: `git fetch` of `refs/mas/*`
  (protocol v2: `ls-refs` with the prefix, then have/want negotiation and a pack), integration
  (fast-forward the changed refs, re-parent local shared-chain records onto the remote tip), and
  `git push` without force of every ref the remote lacks (a receive-pack advertisement of *all*
  the remote's refs, then the pack). A ref the remote rejects is a lost race: the round starts
  again after the jittered exponential pause of `sync::backoff_delay` (20 ms doubling to 800 ms,
  half fixed, half random), at most `MAX_ROUNDS` = 10 rounds; a sync still rejected after round
  10 exits 5.
* **The race.** The remote serializes updates per ref. A round's view of a ref is taken when the
  server answers `ls-refs`. If the ref moved by the push's advertisement, git refuses it on the
  client (`[rejected] (fetch first)`, no pack sent); if it moves between the advertisement and
  the update, receive-pack refuses it (`[remote rejected]`, stale old value or lost ref lock).
  Both are the same event here: the compare-and-swap at the update fails. Per-agent chains
  (`journal/<agent>`, `focus/<agent>`) have one writer, so only shared chains race.
* **Service times** are CPU demands in milliseconds, linear in what git does: per request a fixed
  cost, per ref advertised or checked (`ls-refs`, the receive-pack advertisement, receive-pack's
  connectivity walk `--not --all`), per "have" line negotiated, and per record moved (a record is
  one commit, one tree, one blob: 324 B in a pack; small pushes are written as loose objects,
  which costs per object). Every constant in `Costs` was measured on this machine with the
  release binary and git 2.47.3 (see "Measured constants"); a push also waits 8 ms that is not
  CPU (a one-round sync's wall time less its CPU time: fsync, pipes).
* **CPU.** Each CPU demand is served by a processor-sharing pool: with n jobs on c cores, each
  progresses at min(1, c/(n + b)), b being background load (always-runnable jobs that are not
  ours). In the calibration run everything — six client loops, git daemon and its upload-pack
  and receive-pack — shares one 2-core pool, as on the machine that measured it; b is the one
  parameter fitted (to the measured syncs per second: b = 2.25, `FITTED_BACKGROUND`); rounds,
  retries and exits 5 are then predicted, not fitted. In the hosted run
  the remote is its own pool of `--remote-cores` cores, and each clone's client-side work runs
  uncontended on its own machine.
* **Network.** Loopback in the calibration. Hosted (smart HTTP over TLS): each git process
  opens a connection (2 round trips), fetch then asks for capabilities, ls-refs and its
  negotiation exchanges, push for the advertisement and posts the pack, one round trip each
  (`--rtt-ms`); bytes cross each clone's link at `--link-mbps`. Fetch negotiation takes
  the haves and exchanges git 2.47 took when measured: with ~1,000 local refs, 176 haves in 3
  exchanges when 1 or 10 refs changed, 912 in 5 when 100 or 1,000 did (wants are re-sent in each).
* **Bytes** per round: ls-refs (68 B a ref) and, when something changed, haves, wants, ACKs and
  the pack (324 B a record); a push adds receive-pack's advertisement of every ref (68 B each),
  the commands and its pack. HTTP headers and TLS are not counted.
* **Workload.** Calibration: each clone loops append-shared, append-journal, sync, as the script
  does. Hosted: each agent appends to its own chains (Poisson, `--own-rate` per second) and to a
  shared chain (`--shared-rate`), each clone syncs every `--sync-interval` seconds (±20 %
  jitter; a sync that is still running delays the next, as the per-clone sync lock does).

What it leaves out (see BENCHMARKS.md, "Limits of the model"): an HTTP front end's own cost and
concurrency limit, TLS, larger payloads and pack compression variance, git's fetch negotiation
giving up and sending whole chains again (`--overfetch` scales it by hand), repacking and ref
packing on the remote, disk latency beyond the 8 ms per push, the kernel scheduler's favouring
of processes that wake from sleep, clock skew, an agent writing its own chain from two
machines, and local writers moving a ref during a sync.

Measured constants
------------------
Measured with the release binary (`~/.cargo/bin/git-mas`, 2026-12-02) on a `file://` remote, with
`upload-pack`/`receive-pack` wrapped to record their own CPU time (`wait4` rusage), in three
states: the calibration's (8 refs, ~120-record shared chain; 40 one-round syncs), 1,000 refs
written by `git fast-import` (fetch with 0/10/100/500 changed refs, pushes of 1/11/30 refs, a
stale push), and 1,000 real agents (`git mas agent new` x 1,000, one signed record each on every
journal, then one each on 100 of them; syncs that push and fetch 1,000 and 100 refs, traced with
GIT_TRACE_PACKET for bytes), plus `strace -f` timings of where git-mas spends its own time
within a sync. Medians; milliseconds of CPU (user + system). The comments in `Costs` give the
measured points each constant was read from; where one line fits several points it is off by up
to ~30 % at some of them.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import random
import statistics
import sys
from dataclasses import dataclass

# --- src/sync.rs -------------------------------------------------------------------------------
MAX_ROUNDS = 10
BACKOFF_BASE_MS = 20.0
BACKOFF_CAP_MS = 800.0


# Round trips to open a connection: each git process opens its own (TCP, then TLS 1.3).
CONNECT_EXCHANGES = 2


def backoff_ms(round_no: int, rng: random.Random) -> float:
    """`sync::backoff_delay`: exponential in the round, capped, "equal jitter"."""
    full = min(BACKOFF_BASE_MS * 2 ** min(round_no - 1, 16), BACKOFF_CAP_MS)
    return full / 2 + (full / 2) * rng.random()


# --- Measured constants (ms of CPU unless named otherwise) --------------------------------------
@dataclass
class Costs:
    # client, git-mas itself
    append: float = 7.2  # one `record append` (shared or own chain), median of 80
    loop_shell: float = 3.0  # the calibration loop's own forks per iteration (grep, cut, echo)
    sync_base: float = 4.5  # `git mas sync` minus its git children, nothing to do, 8 refs
    sync_per_ref: float = 0.04  # the same grows to 46 ms at 1,001 refs (listing local and staged refs)
    integrate_per_changed_ref: float = 0.25  # fast-forward + parked check: 1,000 changed refs cost 219-273 ms
    integrate_per_pushed_ref: float = 0.1  # staging update after a push (1,000 pushed: ~100 ms)
    # A 1-round sync that receives 2 records, re-parents 1 and pushes 2 spends 21 ms more in git-mas
    # itself than one with nothing to do. Under `strace -f` (about 4x slower) 3 % of such a sync's
    # time lies between git fetch's exit and git push's start, 40 % after git push's exit (settle,
    # staging updates, the check of received records): most of it is outside the race window.
    rebase: float = 2.5  # re-parenting local shared records, between fetch and push
    after_rounds: float = 18.0  # after the last round, when anything was received or pushed
    # client, git fetch (minus the server's upload-pack)
    fetch_client_fixed: float = 8.0  # nothing new: 8.3 ms at 8 refs ...
    fetch_client_per_ref: float = 0.05  # ... 59 ms at 1,001 refs
    fetch_client_new_fixed: float = 8.0  # something new: 16.7 ms at 8 refs
    fetch_client_per_have: float = 0.06  # 1,001 refs, 912 haves: 133 ms (100 changed), 305 ms (1,000)
    fetch_client_per_changed_ref: float = 0.12
    fetch_client_per_record: float = 0.05
    # client, git push (minus the server's receive-pack)
    push_client_fixed: float = 4.0  # connect + read the advertisement: a stale push, 5.3 ms at 8 refs ...
    push_client_per_advertised_ref: float = 0.027  # ... 31 ms at 1,001 refs
    push_client_pack_fixed: float = 1.5  # pack-objects --thin against the advertised tips
    push_client_pack_per_remote_ref: float = 0.013
    push_client_per_pushed_ref: float = 2.5  # 100 refs at 1,001: 319 ms; 2 refs at 8: 8.8 ms
    # server, upload-pack (fetch)
    upload_fixed: float = 1.5  # ls-refs with nothing new: 1.6 ms at 8 refs ...
    upload_per_ref: float = 0.0087  # ... 10.3 ms at 1,001 refs
    upload_new_fixed: float = 3.0  # negotiation + pack: 6.0 ms at 8 refs (2 records)
    upload_per_have: float = 0.012  # 912 haves: 34 ms (100 changed), 57 ms (1,000 changed)
    upload_per_record: float = 0.02  # records sent in the pack
    # server, receive-pack (push)
    receive_fixed: float = 1.0  # advertisement only (a client-side rejection): 12.9 ms at 1,001 refs
    receive_per_ref: float = 0.0118
    receive_pack_fixed: float = 6.0  # unpack + connectivity + ref updates: 14 ms for 2 refs at 8 refs,
    receive_connectivity_per_ref: float = 0.025  # 50 ms for 1 ref at 1,001 (`rev-list --not --all`),
    receive_per_updated_ref: float = 0.15  # 70 ms for 100 refs (300 objects, kept as a pack)
    receive_per_loose_object: float = 1.5  # <= 100 objects are written loose: 30 refs/90 objects 170-275 ms
    receive_per_packed_object: float = 0.03
    receive_after_update: float = 3.0  # of the above, after the ref updates: `git maintenance run --auto` (trace2)
    unpack_limit: int = 100  # transfer.unpackLimit
    fetch_pre_view: float = 0.2  # share of fetch's fixed cost before ls-refs (strace: upload-pack starts 7 ms into 89)
    daemon_per_connection: float = 1.0  # git daemon's fork + exec (calibration only; not measured)
    push_wait: float = 8.0  # wall, not CPU: a 1-round sync took 79.6 ms against 71.5 ms of CPU (fsync, pipes)
    # bytes (GIT_TRACE_PACKET, GIT_TRACE_PACKFILE)
    record_bytes: float = 324.0  # one record in a pack (1,000 records: 324,490 B)
    ref_line_bytes: float = 68.0  # "<4 len><40 hex> refs/mas/journal/a0000\n"
    have_bytes: float = 50.0  # "0032have <40 hex>\n"; a want line is the same size, re-sent in every exchange
    # Haves git 2.47 sent, 1,000 local refs: 176 in 3 exchanges for 1 or 10 changed refs (the
    # server said "ready"; minimal pack); 912 in 5 for 100 or 1,000 (no "ready": git gave up).
    haves_few: int = 176
    haves_cap: int = 912
    ack_share: float = 0.47  # ACK lines per have (434 of 912), 47 B each
    push_command_bytes: float = 110.0  # "<old> <new> <ref>" per pushed ref
    fixed_request_bytes: float = 400.0  # capabilities, command lines, flushes per request

    # -- derived demands --
    def upload(self, refs: int, haves: int, records: float, anything: bool) -> float:
        ms = self.upload_fixed + self.upload_per_ref * refs
        if anything:
            ms += self.upload_new_fixed + self.upload_per_have * haves + self.upload_per_record * records
        return ms

    def fetch_client(self, refs: int, haves: int, changed: int, records: float, anything: bool) -> float:
        ms = self.fetch_client_fixed + self.fetch_client_per_ref * refs
        if anything:
            ms += (self.fetch_client_new_fixed + self.fetch_client_per_have * haves
                   + self.fetch_client_per_changed_ref * changed + self.fetch_client_per_record * records)
        return ms

    def receive_advert(self, refs: int) -> float:
        return self.receive_fixed + self.receive_per_ref * refs

    def receive_pack(self, refs: int, updated: int, records: int) -> float:
        objects = 3 * records
        per_object = self.receive_per_loose_object if objects <= self.unpack_limit else self.receive_per_packed_object
        return (self.receive_pack_fixed + self.receive_connectivity_per_ref * refs
                + self.receive_per_updated_ref * updated + per_object * objects)

    def push_client_connect(self, refs: int) -> float:
        return self.push_client_fixed + self.push_client_per_advertised_ref * refs

    def push_client_pack(self, refs: int, pushed: int) -> float:
        return (self.push_client_pack_fixed + self.push_client_pack_per_remote_ref * refs
                + self.push_client_per_pushed_ref * pushed)

    def haves(self, local_tips: int, changed: int) -> int:
        """176 up to 10 changed refs, 912 from 100 on (measured), a straight line between."""
        grow = (self.haves_cap - self.haves_few) / 90 * max(changed - 10, 0)
        return min(local_tips, self.haves_cap, self.haves_few + round(grow))

    @staticmethod
    def negotiation_exchanges(haves: int) -> int:
        """Fetch requests after ls-refs: 2 with a few refs, 3 with 176 haves, 5 with 912 (measured)."""
        if haves <= 16:
            return 2
        return 3 + math.ceil(max(haves - 176, 0) / 368)


# --- The event engine -------------------------------------------------------------------------
class Sim:
    """A heap of timed callbacks; processes are generators that yield actions (see `sleep`, `Pool.cpu`)."""

    def __init__(self) -> None:
        self.now = 0.0
        self._q: list = []
        self._seq = 0

    def at(self, t: float, fn, *args) -> None:
        self._seq += 1
        heapq.heappush(self._q, (t, self._seq, fn, args))

    def run(self, until: float) -> None:
        while self._q and self._q[0][0] <= until:
            t, _, fn, args = heapq.heappop(self._q)
            self.now = t
            fn(*args)
        self.now = until

    def start(self, gen) -> None:
        self._step(gen, None)

    def _step(self, gen, value) -> None:
        try:
            action = gen.send(value)
        except StopIteration:
            return
        action(self, lambda v=None: self._step(gen, v))


def sleep(ms: float):
    return lambda sim, resume: sim.at(sim.now + max(ms, 0.0), resume)


class Pool:
    """Processor sharing on `cores` cores, with `background` always-runnable foreign jobs.

    Every job progresses at the same rate, so one virtual clock (service attained per job) and a
    heap of finishing virtual times suffice.
    """

    def __init__(self, sim: Sim, cores: float, background: float = 0.0) -> None:
        self.sim, self.cores, self.background = sim, cores, background
        self.v = 0.0
        self.t = 0.0
        self.jobs: list = []
        self.seq = 0
        self.token = 0
        self.busy = 0.0  # core-ms given to our jobs

    def _rate(self) -> float:
        n = len(self.jobs)
        return min(1.0, self.cores / (n + self.background)) if n else 0.0

    def _advance(self) -> None:
        dt = self.sim.now - self.t
        if dt > 0 and self.jobs:
            r = self._rate()
            self.v += dt * r
            self.busy += dt * r * len(self.jobs)
        self.t = self.sim.now

    def _schedule(self) -> None:
        self.token += 1
        if self.jobs:
            dt = (self.jobs[0][0] - self.v) / self._rate()
            self.sim.at(self.sim.now + max(dt, 0.0), self._complete, self.token)

    def _complete(self, token: int) -> None:
        if token != self.token:
            return
        self._advance()
        done = []
        while self.jobs and self.jobs[0][0] <= self.v + 1e-9 * max(1.0, self.v):
            done.append(heapq.heappop(self.jobs)[2])
        self._schedule()
        for resume in done:
            resume()

    def busy_now(self) -> float:
        """Core-ms given to our jobs up to now."""
        self._advance()
        return self.busy

    def cpu(self, ms: float):
        def action(sim, resume):
            if ms <= 0:
                sim.at(sim.now, resume)
                return
            self._advance()
            self.seq += 1
            heapq.heappush(self.jobs, (self.v + ms, self.seq, resume))
            self._schedule()
        return action


# --- The remote -------------------------------------------------------------------------------
class Remote:
    """Ref versions and an update log (ref, writer clone, records) for what each fetch brings."""

    def __init__(self, n_refs: int) -> None:
        self.n_refs = n_refs
        self.version = [0] * n_refs
        self.log: list[tuple[int, int, int]] = []
        self.updates = 0
        self.rejected_server = 0
        self.rejected_client = 0

    def changes(self, since: int, until: int, clone: int) -> tuple[int, int]:
        """Distinct refs and records written by others in log[since:until]."""
        refs, records = set(), 0
        for ref, writer, n in self.log[since:until]:
            if writer != clone:
                refs.add(ref)
                records += n
        return len(refs), records

    def update(self, ref: int, clone: int, records: int) -> None:
        self.version[ref] += 1
        self.log.append((ref, clone, records))
        self.updates += 1


# --- A clone ------------------------------------------------------------------------------------
@dataclass
class SyncResult:
    start: float
    end: float
    rounds: int
    exit5: bool
    lost_rounds: int
    bytes_down: float
    bytes_up: float
    fetch_requests: int
    push_requests: int
    received: int = 0
    pushed: int = 0
    shared: bool = False  # tried to push a shared chain
    advert_bytes: float = 0.0  # of bytes_down: ls-refs and receive-pack advertisements


class Clone:
    def __init__(self, cid: int, world: "World", own_refs: list[int]) -> None:
        self.id, self.w, self.own_refs = cid, world, own_refs
        self.pending: dict[int, int] = {}  # ref -> records the remote lacks
        self.seen_log = 0  # remote log position of the last fetch
        self.seen_version: dict[int, int] = {}  # shared ref -> version at the last fetch
        self.rng = random.Random(world.rng.random())
        self.results: list[SyncResult] = []

    # -- where work runs --
    def local(self, ms: float):
        return self.w.client_pool(self).cpu(ms) if self.w.client_pool(self) else sleep(ms)

    def server(self, ms: float, part: str):
        self.w.demand[part] = self.w.demand.get(part, 0.0) + ms
        return self.w.remote_pool.cpu(ms)

    def exchange(self, n: int = 1):
        return sleep(n * self.w.rtt_ms)

    def transfer(self, nbytes: float):
        return sleep(nbytes * 8 / (self.w.link_mbps * 1000.0)) if self.w.link_mbps else sleep(0)

    def append(self, ref: int) -> None:
        self.pending[ref] = self.pending.get(ref, 0) + 1

    # -- one sync --
    def sync(self):
        w, c = self.w, self.w.costs
        res = SyncResult(w.sim.now, 0.0, 0, False, 0, 0.0, 0.0, 0, 0)
        yield self.local(c.sync_base + c.sync_per_ref * w.remote.n_refs)
        for n in range(1, MAX_ROUNDS + 1):
            res.rounds = n
            rejected = yield from self.round(res)
            if not rejected:
                break
            res.lost_rounds += 1
            if n == MAX_ROUNDS:
                res.exit5 = True
            else:
                yield sleep(backoff_ms(n, self.rng))
        if res.received or res.pushed:
            yield self.local(c.after_rounds)
        res.end = w.sim.now
        self.results.append(res)
        return res

    def round(self, res: SyncResult):
        w, c, r = self.w, self.w.costs, self.w.remote
        refs = r.n_refs
        # fetch: ls-refs (the round's view of every ref), negotiation, pack
        res.fetch_requests += 1
        yield self.local(c.fetch_client_fixed * c.fetch_pre_view)
        if w.daemon:
            yield self.server(c.daemon_per_connection, "daemon")
        yield self.exchange(CONNECT_EXCHANGES + 2)  # connect; GET info/refs (capabilities); POST ls-refs
        view_log, view_time = len(r.log), w.sim.now
        view = {s: r.version[s] for s in w.shared_refs}
        changed, records = r.changes(self.seen_log, view_log, self.id)
        anything = changed > 0
        haves = c.haves(refs, changed) if anything else 0
        exchanges = c.negotiation_exchanges(haves) if anything else 0
        sent_records = records * w.overfetch
        down = c.fixed_request_bytes + c.ref_line_bytes * refs
        up = c.fixed_request_bytes
        if anything:
            down += c.ack_share * haves * 47 + 32 + c.record_bytes * sent_records
            up += c.have_bytes * haves + c.have_bytes * changed * exchanges
        yield self.server(c.upload(refs, haves, sent_records, anything), "upload-pack")
        if anything:
            yield self.exchange(exchanges)  # POST fetch: haves and wants, then the pack
        yield self.transfer(down + up)
        yield self.local(c.fetch_client(refs, haves, changed, sent_records, anything) - c.fetch_client_fixed * c.fetch_pre_view)
        # integrate: fast-forward what changed; re-parent local shared records onto a moved tip
        rebase = any(self.pending.get(s) and view[s] != self.seen_version.get(s, 0) for s in w.shared_refs)
        self.seen_log, self.seen_version = view_log, dict(view)
        res.received += records
        to_push = {ref: k for ref, k in self.pending.items() if k}
        yield self.local(c.integrate_per_changed_ref * changed + (c.rebase if rebase else 0.0)
                         + c.integrate_per_pushed_ref * len(to_push))
        res.bytes_down += down
        res.bytes_up += up
        res.advert_bytes += c.ref_line_bytes * refs
        if not to_push:
            return False
        # push: the advertisement of every ref, git's own fast-forward check, the pack, the updates
        res.push_requests += 1
        w.push_requests += 1
        yield self.local(c.push_client_connect(refs + 1))
        if w.daemon:
            yield self.server(c.daemon_per_connection, "daemon")
        yield self.exchange(CONNECT_EXCHANGES + 1)  # connect; GET info/refs (the advertisement)
        yield self.server(c.receive_advert(refs + 1), "receive-pack advertisement")
        down = c.fixed_request_bytes + c.ref_line_bytes * (refs + 1)
        yield self.transfer(down)
        res.advert_bytes += c.ref_line_bytes * (refs + 1)
        rejected = False
        res.shared = res.shared or any(s in to_push for s in w.shared_refs)
        for s in w.shared_refs:
            if s in to_push and r.version[s] != view[s]:
                del to_push[s]  # "[rejected] (fetch first)": the client sends nothing for it
                r.rejected_client += 1
                rejected = True
        up = 0.0
        if to_push:
            pushed_records = sum(to_push.values())
            up = c.fixed_request_bytes + c.push_command_bytes * len(to_push) + 32 + c.record_bytes * pushed_records
            down += 30 * len(to_push)
            yield self.local(c.push_client_pack(refs + 1, len(to_push)))
            yield self.transfer(up)
            yield self.exchange(1)  # POST git-receive-pack
            yield self.server(c.receive_pack(refs + 1, len(to_push), pushed_records) - c.receive_after_update,
                              "receive-pack pack and updates")
            yield sleep(c.push_wait)
            if any(s in to_push for s in w.shared_refs):
                w.windows.append(w.sim.now - view_time)
            for ref, k in to_push.items():
                if ref in view and r.version[ref] != view[ref]:
                    r.rejected_server += 1  # "[remote rejected]": the old value no longer holds
                    rejected = True
                    continue
                r.update(ref, self.id, k)
                res.pushed += k
                self.pending[ref] -= k
                if ref in view:
                    self.seen_version[ref] = r.version[ref]
            yield self.server(c.receive_after_update, "receive-pack pack and updates")
        res.bytes_down += down
        res.bytes_up += up
        return rejected


class World:
    def __init__(self, seed: int, clones: int, agents: int, refs_per_agent: int, shared: int,
                 costs: Costs, remote_cores: float, background: float, calibration: bool,
                 rtt_ms: float, link_mbps: float, overfetch: float) -> None:
        self.sim = Sim()
        self.rng = random.Random(seed)
        self.costs = costs
        n_own = agents * refs_per_agent
        self.shared_refs = list(range(n_own, n_own + shared))
        self.remote = Remote(n_own + shared)
        self.calibration = calibration
        self.daemon = calibration
        self.rtt_ms = rtt_ms
        self.link_mbps = link_mbps
        self.overfetch = overfetch
        self.push_requests = 0
        self.demand: dict[str, float] = {}  # remote CPU asked for, by part (ms)
        self.windows: list[float] = []  # ms from ls-refs to the update, for pushes of a shared chain
        # calibration: one 2-core machine runs everything; hosted: the remote has its own cores
        self.remote_pool = Pool(self.sim, remote_cores, background)
        per = [list(range(a * refs_per_agent, (a + 1) * refs_per_agent)) for a in range(agents)]
        self.clones = [Clone(i, self, [ref for a in range(i, agents, clones) for ref in per[a]])
                       for i in range(clones)]
        self.agents_of = [len(range(i, agents, clones)) for i in range(clones)]

    def client_pool(self, clone: Clone):
        return self.remote_pool if self.calibration else None


# --- The two experiments --------------------------------------------------------------------------
MEASURED = {  # BENCHMARKS.md, "Sync under contention": RUNS=3 bench/sync-contention.sh
    "syncs": [113, 110, 119],
    "exit5": [4, 7, 8],
    "rounds_mean": [3.45, 3.45, 3.21],
    "rounds_median": [2, 2, 2],
    "longest_exit5_run": [1, 1, 2],
}

# The calibration machine's background load b, from `--fit`: the one parameter fitted (to syncs/s).
FITTED_BACKGROUND = 2.25


def calibration_run(seed: int, background: float, duration_s: float = 20.0, clones: int = 6,
                    costs: Costs | None = None) -> dict:
    """The loop of bench/sync-contention.sh: append shared, append journal, sync; 6 clones, 20 s."""
    costs = costs or Costs()
    w = World(seed, clones, clones, 1, 1, costs, remote_cores=2, background=background,
              calibration=True, rtt_ms=0.0, link_mbps=0.0, overfetch=1.0)
    shared = w.shared_refs[0]
    # bash's SECONDS counts whole seconds: the loop starts a last iteration up to 1 s early
    end_ms = (duration_s - 0.5) * 1000

    def loop(cl: Clone):
        yield sleep(cl.rng.random() * 50)  # the clones start within a few ms of each other
        while w.sim.now < end_ms:
            yield w.remote_pool.cpu(costs.append)
            cl.append(shared)
            yield w.remote_pool.cpu(costs.append)
            cl.append(cl.own_refs[0])
            yield w.remote_pool.cpu(costs.loop_shell)
            yield from cl.sync()

    for cl in w.clones:
        w.sim.start(loop(cl))
    w.sim.run(end_ms)
    busy = w.remote_pool.busy_now()
    w.sim.run(end_ms + 60_000)  # the iterations under way finish, as the script waits for them
    res = [r for cl in w.clones for r in cl.results]
    rounds = sorted(r.rounds for r in res)

    def longest(cl):
        best = cur = 0
        for r in cl.results:
            cur = cur + 1 if r.exit5 else 0
            best = max(best, cur)
        return best

    return {
        "syncs": len(res),
        "syncs_per_s": len(res) / duration_s,
        "retry_share": sum(r.rounds > 1 for r in res) / len(res),
        "exit5_share": sum(r.exit5 for r in res) / len(res),
        "rounds_mean": statistics.mean(rounds),
        "rounds_median": rounds[len(rounds) // 2],
        "longest_exit5_run": max(longest(cl) for cl in w.clones),
        "cpu_utilisation": busy / (2 * end_ms),
    }


def calibration(seeds: list[int], background: float, costs: Costs | None = None) -> dict:
    runs = [calibration_run(s, background, costs=costs) for s in seeds]
    keys = runs[0].keys()
    return {k: statistics.mean(r[k] for r in runs) for k in keys} | {"runs": runs}


def fit_background(seeds: list[int], costs: Costs | None = None) -> tuple[float, list[tuple[float, float]]]:
    target = statistics.mean(MEASURED["syncs"])
    grid = [x / 4 for x in range(0, 17)]
    scores = [(b, calibration(seeds, b, costs)["syncs"]) for b in grid]
    best = min(scores, key=lambda s: abs(s[1] - target))
    return best[0], scores


def hosted_run(args, **over) -> dict:
    """Agents append at random; each clone syncs every `sync_interval` s (+-20 %), never two at once."""
    a = argparse.Namespace(**(vars(args) | over))
    costs = Costs(**(a.costs | {"record_bytes": a.record_bytes}))
    w = World(a.seed, a.clones, a.agents, a.refs_per_agent, a.shared_chains, costs,
              remote_cores=a.remote_cores, background=0.0, calibration=False,
              rtt_ms=a.rtt_ms, link_mbps=a.link_mbps, overfetch=a.overfetch)
    duration, warmup, interval = a.duration * 1000, a.warmup * 1000, a.sync_interval * 1000

    def appends(cl: Clone):
        n = w.agents_of[cl.id]
        own, shared = n * a.own_rate / 1000, n * a.shared_rate / 1000  # records per ms
        while own + shared > 0:
            yield sleep(cl.rng.expovariate(own + shared))
            if cl.rng.random() < shared / (own + shared):
                cl.append(cl.rng.choice(w.shared_refs))
            else:
                cl.append(cl.rng.choice(cl.own_refs))

    def syncer(cl: Clone):
        yield sleep(cl.rng.random() * interval)
        while True:
            start = w.sim.now
            yield from cl.sync()
            yield sleep(start + interval * (0.8 + 0.4 * cl.rng.random()) - w.sim.now)

    for cl in w.clones:
        if w.agents_of[cl.id]:
            w.sim.start(appends(cl))
            w.sim.start(syncer(cl))

    def counters():
        return (w.remote_pool.busy_now(), w.remote.updates, w.push_requests,
                w.remote.rejected_client + w.remote.rejected_server, dict(w.demand))

    w.sim.run(warmup)
    c0 = counters()
    w.sim.run(duration)
    c1 = counters()
    w.sim.run(duration + 300_000)  # syncs started in the window finish (their rounds and bytes count)
    span_s = (duration - warmup) / 1000
    res = [r for cl in w.clones for r in cl.results if warmup <= r.start < duration]
    row = {"sync_interval": a.sync_interval, "shared_rate": a.shared_rate, "agents": a.agents,
           "clones": a.clones, "refs": w.remote.n_refs, "offered_syncs_per_s": a.clones / a.sync_interval}
    if not res:
        return row | {"syncs": 0}
    per_agent = a.agents / a.clones
    lat = sorted((r.end - r.start) / 1000 for r in res)
    shared = [r for r in res if r.shared]
    return row | {
        "syncs": len(res),
        "syncs_per_s": len(res) / span_s,
        "fetches_per_s": sum(r.fetch_requests for r in res) / span_s,
        "push_requests_per_s": (c1[2] - c0[2]) / span_s,
        "ref_updates_per_s": (c1[1] - c0[1]) / span_s,
        "rejected_ref_pushes_per_s": (c1[3] - c0[3]) / span_s,
        "remote_utilisation": (c1[0] - c0[0]) / (a.remote_cores * (duration - warmup)),
        "remote_ms_per_sync": {k: (v - c0[4].get(k, 0.0)) / span_s / (len(res) / span_s)
                               for k, v in c1[4].items()},
        "retry_share": sum(r.rounds > 1 for r in res) / len(res),
        "shared_share": len(shared) / len(res),
        "retry_share_of_shared": sum(r.rounds > 1 for r in shared) / len(shared) if shared else 0.0,
        "exit5_share": sum(r.exit5 for r in res) / len(res),
        "rounds_mean": statistics.mean(r.rounds for r in res),
        "sync_s_median": lat[len(lat) // 2],
        "sync_s_p95": lat[min(len(lat) - 1, int(0.95 * len(lat)))],
        "kib_down_per_sync_per_agent": statistics.mean(r.bytes_down for r in res) / per_agent / 1024,
        "kib_up_per_sync_per_agent": statistics.mean(r.bytes_up for r in res) / per_agent / 1024,
        "advert_share_of_down": sum(r.advert_bytes for r in res) / sum(r.bytes_down for r in res),
        "shared_window_s_median": statistics.median(w.windows) / 1000 if w.windows else 0.0,
        "remote_egress_mb_s": sum(r.bytes_down for r in res) / span_s / 1e6,
    }


SWEEPS = {  # name: (the argument swept, its label, how a value is shown)
    "interval": ("sync_interval", "sync interval", lambda v: f"{v:g} s"),
    "shared": ("shared_rate", "shared records per agent", lambda v: f"{v:g}/s ({v * 1000:g}/s per 1,000)"),
    "agents": ("agents", "agents", lambda v: f"{v:,}"),
}


# --- Output -------------------------------------------------------------------------------------
def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def print_calibration(model: dict, background: float, seeds: list[int]) -> None:
    m = MEASURED
    mean = statistics.mean
    syncs_meas = mean(m["syncs"])
    exit5_meas = mean(e / s for e, s in zip(m["exit5"], m["syncs"]))
    rounds_meas = mean(m["rounds_mean"])
    print(f"### Calibration: six clones through `git daemon`, 20 s (model: seeds {seeds[0]}–{seeds[-1]}, "
          f"background load b = {background:g})\n")
    print("| quantity | measured (3 runs) | model (mean of seeds) | model − measured |")
    print("|---|---|---|---|")
    rows = [
        ("syncs per second (b fitted to it)", f"{syncs_meas / 20:.2f} ({', '.join(str(s) for s in m['syncs'])} per run)",
         f"{model['syncs_per_s']:.2f}", f"{100 * (model['syncs_per_s'] / (syncs_meas / 20) - 1):+.0f} %"),
        ("share of syncs needing a retry round", "≥ 50 % (the median sync took 2 rounds)",
         pct(model["retry_share"]), "—"),
        ("share of syncs exiting 5", f"{pct(exit5_meas)} (3.5, 6.4, 6.7 %)", pct(model["exit5_share"]),
         f"{100 * (model['exit5_share'] - exit5_meas):+.1f} points"),
        ("rounds per sync, mean", f"{rounds_meas:.2f} (3.45, 3.45, 3.21)", f"{model['rounds_mean']:.2f}",
         f"{100 * (model['rounds_mean'] / rounds_meas - 1):+.0f} %"),
        ("rounds per sync, median", "2 (each run)", f"{model['rounds_median']:g}", "—"),
        ("longest run of exit 5 in one clone", "1, 1, 2", f"{model['longest_exit5_run']:g}", "—"),
    ]
    for row in rows:
        print("| " + " | ".join(row) + " |")
    runs = model["runs"]
    print(f"\nPer seed: syncs {[r['syncs'] for r in runs]}, exit 5 "
          f"{[pct(r['exit5_share']) for r in runs]}, rounds mean {[round(r['rounds_mean'], 2) for r in runs]}, "
          f"median {[r['rounds_median'] for r in runs]}; our jobs kept the 2-core pool "
          f"{pct(model['cpu_utilisation'])} busy.\n")


def print_hosted(sweep: str, rows: list[dict], args) -> None:
    key, label, show = SWEEPS[sweep]
    fixed = {"sync_interval": f"a sync every {args.sync_interval:g} s per clone",
             "shared_rate": f"{args.shared_rate:g} shared records/s per agent",
             "agents": f"{args.agents:,} agents"}
    context = ", ".join(v for k, v in fixed.items() if k != key)
    print(f"### Sweep of the {label}: {context}; {args.clones} clones, {args.refs_per_agent} chains per agent, "
          f"{args.shared_chains} shared chain; {args.own_rate:g} own records/s per agent; remote "
          f"{args.remote_cores:g} cores, RTT {args.rtt_ms:g} ms; {args.duration - args.warmup:g} s after "
          f"{args.warmup:g} s warm-up; seed {args.seed}\n")
    print(f"| {label} | syncs/s done (offered) | push requests/s | ref updates/s | remote CPU | "
          "syncs that lost a race (of those pushing a shared record) | exit 5 | rounds, mean | "
          "sync time, median / p95 | shared push: ls-refs to update, median | "
          "KiB per sync per agent, down (advertisements) / up | remote egress |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if not r.get("syncs"):
            print(f"| {show(r[key])} | no sync completed | | | | | | | | | | |")
            continue
        print(f"| {show(r[key])} | {r['syncs_per_s']:.1f} ({r['offered_syncs_per_s']:.1f}) | "
              f"{r['push_requests_per_s']:.1f} | {r['ref_updates_per_s']:.1f} | {pct(r['remote_utilisation'])} | "
              f"{pct(r['retry_share'])} ({pct(r['retry_share_of_shared'])} of {pct(r['shared_share'])}) | "
              f"{pct(r['exit5_share'])} | {r['rounds_mean']:.2f} | "
              f"{r['sync_s_median']:.2f} / {r['sync_s_p95']:.2f} s | "
              + (f"{r['shared_window_s_median']:.2f} s | " if r['shared_window_s_median'] else "— | ")
              + f"{r['kib_down_per_sync_per_agent']:.1f} ({pct(r['advert_share_of_down'])}) / "
              f"{r['kib_up_per_sync_per_agent']:.1f} | "
              f"{r['remote_egress_mb_s']:.1f} MB/s |")
    default = next((r for r in rows if r.get("syncs") and r[key] == getattr(args, key)), None)
    if default:
        parts = ", ".join(f"{k} {v:.0f}" for k, v in default["remote_ms_per_sync"].items())
        print(f"\nRemote CPU asked per sync done at {show(default[key])}: {parts} ms "
              f"(retries included).")
    print(f"\n{saturation(sweep, rows)}\n")


def saturation(sweep: str, rows: list[dict]) -> str:
    key, label, show = SWEEPS[sweep]
    ok = [r for r in rows if r.get("syncs")]
    cpu = next((r for r in ok if r["remote_utilisation"] >= 0.9), None)
    exit5 = next((r for r in ok if r["exit5_share"] > 0.01), None)
    parts = [f"remote CPU ≥ 90 % from {show(cpu[key])} ({cpu['syncs_per_s']:.1f} syncs/s done of "
             f"{cpu['offered_syncs_per_s']:.1f} offered)" if cpu else "remote CPU below 90 % throughout",
             f"exit 5 above 1 % from {show(exit5[key])}" if exit5 else "exit 5 at most 1 % throughout"]
    return "Saturation (" + label + ", in the order swept): " + "; ".join(parts) + "."


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", choices=["calibration", "hosted"], help="run one experiment")
    p.add_argument("--calibration-seeds", type=int, default=5, help="seeds averaged for the 6-clone replay")
    p.add_argument("--background", type=float, default=None,
                   help="background load b of the calibration machine (default: the fitted value)")
    p.add_argument("--fit", action="store_true", help="re-fit b to the measured syncs per second and use it")
    p.add_argument("--clones", type=int, default=100)
    p.add_argument("--agents", type=int, default=1000)
    p.add_argument("--refs-per-agent", type=int, default=2, help="per-agent chains (journal, focus)")
    p.add_argument("--shared-chains", type=int, default=1)
    p.add_argument("--own-rate", type=float, default=0.05, help="records/s per agent to its own chains")
    p.add_argument("--shared-rate", type=float, default=0.001, help="records/s per agent to shared chains")
    p.add_argument("--sync-interval", type=float, default=10.0, help="seconds between a clone's syncs")
    p.add_argument("--sweeps", default="interval,shared", help="comma-separated: interval, shared, agents")
    p.add_argument("--intervals", default="60,30,15,10,5,3,2,1", help="sync intervals swept (s)")
    p.add_argument("--shared-rates", default="0,0.0005,0.001,0.002,0.004,0.008",
                   help="shared records/s per agent swept")
    p.add_argument("--agent-counts", default="250,500,1000,2000,4000", help="agents swept")
    p.add_argument("--duration", type=float, default=200.0, help="simulated seconds per hosted run")
    p.add_argument("--warmup", type=float, default=20.0, help="seconds left out at the start")
    p.add_argument("--remote-cores", type=float, default=4.0)
    p.add_argument("--rtt-ms", type=float, default=20.0)
    p.add_argument("--link-mbps", type=float, default=100.0, help="each clone's link")
    p.add_argument("--record-bytes", type=float, default=324.0, help="one record in a pack")
    p.add_argument("--overfetch", type=float, default=1.0,
                   help="records a fetch carries per new record (>1 when negotiation gives up)")
    p.add_argument("--cost", action="append", default=[], metavar="NAME=VALUE",
                   help="override one constant of Costs (repeatable), e.g. --cost rebase=10")
    p.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = p.parse_args(argv)
    known = Costs.__dataclass_fields__
    args.costs = {}
    for item in args.cost:
        name, _, value = item.partition("=")
        if name not in known or not value:
            p.error(f"--cost {item}: expected NAME=VALUE with NAME one of {', '.join(known)}")
        args.costs[name] = type(getattr(Costs, name))(value)
    unknown = [x for x in args.sweeps.split(",") if x and x not in SWEEPS]
    if unknown:
        p.error(f"--sweeps: unknown {', '.join(unknown)} (choose from {', '.join(SWEEPS)})")
    if args.costs and not args.json:
        print(f"Costs overridden: {args.costs}\n")

    out: dict = {}
    if args.only != "hosted":
        seeds = [args.seed + i for i in range(args.calibration_seeds)]
        background = FITTED_BACKGROUND if args.background is None else args.background
        costs = Costs(**args.costs)
        if args.fit:
            background, scores = fit_background(seeds, costs)
            out["fit"] = scores
            if not args.json:
                print("Fit of b (mean syncs per 20 s over the seeds; measured 114): "
                      + ", ".join(f"{b:g}: {s:.0f}" for b, s in scores) + f" → b = {background:g}\n")
        model = calibration(seeds, background, costs)
        out["calibration"] = {"background": background, "seeds": seeds, "model": model, "measured": MEASURED}
        if not args.json:
            print_calibration(model, background, seeds)
    if args.only != "calibration":
        values = {"interval": args.intervals, "shared": args.shared_rates, "agents": args.agent_counts}
        out["hosted"] = {"args": vars(args)}
        for sweep in [s for s in args.sweeps.split(",") if s]:
            key = SWEEPS[sweep][0]
            cast = int if key == "agents" else float
            rows = [hosted_run(args, **{key: cast(v)}) for v in values[sweep].split(",")]
            out["hosted"][sweep] = {"rows": rows, "saturation": saturation(sweep, rows)}
            if not args.json:
                print_hosted(sweep, rows, args)
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
