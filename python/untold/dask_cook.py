"""The distributed tile cook on Dask (docs/distributed.md).

    python -m untold.dask_cook SRC OUT [--tiles grid:64] [--scheduler ADDRESS] [--workers N]

plans ``untold cook SRC --tiles ... -o OUT`` as independent jobs (one per
tile, one per tile's HLOD, the shared bucket, then the manifest), runs them
on a Dask cluster (a LocalCluster of --workers processes unless --scheduler
names one) with a console progress bar and the dashboard's address, and
writes the same bytes as the single-process cook. Every job reads the
source and writes its files atomically, so a job that Dask runs again (its
worker died) rewrites the same bytes; the manifest job runs only after every
other job succeeded. The source, OUT and the plan (with PLAN.d/, the jobs'
results) must be reachable under the same paths by every worker: a shared
file system, or object storage mounted through fsspec.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import untold


def run_job(plan: str, job: int, *after: Any) -> Dict[str, Any]:
    """One job on a worker (``after``: the results it waits for; unused)."""
    report = untold.run_tile_job(plan, job)
    return {"job": job, "written": report.written}


def job_key(plan: Dict[str, Any], job: int) -> str:
    j = plan["jobs"][job]
    return f"untold-{j['kind']}-{j['tile'] or 'manifest'}-{job}"


def cook(source: str, output: str, tiles: str = "grid:64", scheduler: Optional[str] = None, workers: int = 2,
         plan_path: Optional[str] = None, progress: bool = True, runner: Callable[..., Any] = run_job,
         client: Any = None, **options: Any) -> Dict[str, Any]:
    """Plans the cook (:func:`untold.plan_tiles`, here) and runs it on Dask (:func:`run_plan`)."""
    source, output = os.path.abspath(source), os.path.abspath(output)
    if plan_path is None:
        parent = os.path.dirname(output) or "."
        os.makedirs(parent, exist_ok=True)
        plan_path = os.path.join(tempfile.mkdtemp(prefix="untold-plan-", dir=parent), "plan.json")
    started = time.monotonic()
    untold.plan_tiles(source, output, plan_path, tiles, **options)
    r = run_plan(plan_path, scheduler, workers, progress, runner, client)
    r["seconds"] = time.monotonic() - started
    return r


def run_plan(plan_path: str, scheduler: Optional[str] = None, workers: int = 2, progress: bool = True,
             runner: Callable[..., Any] = run_job, client: Any = None) -> Dict[str, Any]:
    """Runs a written plan's jobs on Dask: ``client``, else a Client of
    ``scheduler``, else a LocalCluster of ``workers`` processes (closed after).

    Returns {"plan", "jobs", "manifest", "seconds", "dashboard"}. ``runner(plan,
    job, *after)`` runs one job on a worker (tests pass one that misbehaves).
    Raises :class:`untold.UntoldError` for the first job that failed (its
    message names the job and the tile); the manifest is then not written.
    """
    from dask.distributed import Client, LocalCluster, as_completed

    plan_path = os.path.abspath(plan_path)
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    jobs: List[Dict[str, Any]] = plan["jobs"]
    started = time.monotonic()
    own_cluster = None
    if client is None:
        if scheduler:
            client = Client(scheduler)
        else:
            own_cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
            client = Client(own_cluster)
    bar = None
    try:
        dashboard = client.dashboard_link
        if progress:
            print(f"untold: {len(jobs)} jobs for {plan['source']} -> {plan['output']}; Dask dashboard: {dashboard}",
                  file=sys.stderr)
            from tqdm import tqdm
            bar = tqdm(total=len(jobs), unit="job", file=sys.stderr)
        futures = [client.submit(runner, plan_path, k, key=job_key(plan, k), pure=False) for k in range(len(jobs) - 1)]
        # The manifest waits for every other job; Dask never runs it when one failed.
        manifest = client.submit(runner, plan_path, len(jobs) - 1, *futures, key=job_key(plan, len(jobs) - 1), pure=False)
        everything = futures + [manifest]
        for future in as_completed(everything):
            if future.status == "error":
                error = future.exception()  # the job's UntoldError, rule id and tile in its message
                client.cancel(everything)
                raise error
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        if own_cluster is not None:
            client.close()
            own_cluster.close()
    return {"plan": plan_path, "jobs": len(jobs), "manifest": os.path.join(plan["output"], plan["options"]["manifest_name"]),
            "seconds": time.monotonic() - started, "dashboard": dashboard}


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m untold.dask_cook", description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="the scene to cook (glTF, OBJ, FBX, .mdl ...)")
    p.add_argument("output", help="the output directory (tiles/, shared.untold, manifest.json)")
    p.add_argument("--tiles", default="grid:64", help="grid:SIZE or quadtree[:MAXTRIS] (default grid:64)")
    p.add_argument("--scheduler", help="a Dask scheduler's address (default: a LocalCluster)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    p.add_argument("--plan", help="where to write the plan (default: a new folder beside OUTPUT)")
    p.add_argument("--compress", default="none", help="chunk compression, as untold cook --compress")
    p.add_argument("--vertex-layout", default="static", choices=["static", "quantized"])
    p.add_argument("--no-hlod", action="store_true", help="write no HLOD proxies")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    try:
        r = cook(a.source, a.output, a.tiles, a.scheduler, a.workers, a.plan, progress=not a.quiet,
                 compress=a.compress, vertex_layout=a.vertex_layout, hlods=not a.no_hlod)
    except untold.UntoldError as e:
        print(f"untold: {e}", file=sys.stderr)
        return 1
    if not a.quiet:
        print(f"cooked {a.source} -> {a.output}: {r['jobs']} jobs in {r['seconds']:.1f} s, manifest {r['manifest']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
