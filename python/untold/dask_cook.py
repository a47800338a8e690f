"""The distributed tile cook on Dask (docs/distributed.md).

    python -m untold.dask_cook SRC OUT [--tiles grid:64] [--scheduler ADDRESS] [--workers N] [--plan PLAN]

plans ``untold cook SRC --tiles ... -o OUT`` (the source is imported and cut
into one piece per tile once, on the client), then runs the plan's jobs on a
Dask cluster (a LocalCluster of --workers processes unless --scheduler names
one) with a console progress bar and the dashboard's address: per tile one
job for its file, one per LOD level (each after the level before), one for
its HLOD; the shared bucket's; then the manifest. It writes the same bytes as
the single-process cook. Every job writes its files atomically, so a job
that Dask runs again (its worker died) rewrites the same bytes; the manifest
job runs only after every other job succeeded.

Where the data lives: SRC, OUT and PLAN are paths on a file system every
worker mounts at the same place, or fsspec URLs (``s3://bucket/out``,
``gcs://...``, ``file:///...``: anything ``fsspec.core.url_to_fs`` opens).
With URLs, each job copies in only what it reads (its piece, the results it
waits for), runs in a private temporary folder, and copies out what it
wrote; the client downloads the source to plan it and uploads the plan.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence

import untold


def is_url(path: str) -> bool:
    """An fsspec URL (``proto://...``, ``proto::...``) rather than a local path."""
    return "://" in path or "::" in path


def _fs(url: str):
    from fsspec.core import url_to_fs
    return url_to_fs(url)


def _upload(local: str, url: str) -> None:
    """Copies a file to ``url`` atomically: a single object PUT on object
    storage, a temporary name then a rename on a file system."""
    fs, path = _fs(url)
    parent = path.rsplit("/", 1)[0]
    if parent:
        fs.makedirs(parent, exist_ok=True)
    if "file" in (fs.protocol if isinstance(fs.protocol, (list, tuple)) else (fs.protocol,)):
        temporary = f"{path}.tmp-{uuid.uuid4().hex}"
        fs.put_file(local, temporary)
        fs.mv(temporary, path)
    else:
        fs.put_file(local, path)


def _download(url: str, local: str) -> bool:
    fs, path = _fs(url)
    if not fs.exists(path):
        return False
    os.makedirs(os.path.dirname(local), exist_ok=True)
    fs.get_file(path, local)
    return True


def _join(url: str, *parts: str) -> str:
    return "/".join([url.rstrip("/"), *parts])


def waits_for(jobs: List[Dict[str, Any]], job: int) -> List[int]:
    """The earlier jobs whose results job ``job`` reads: its ``after`` list,
    and for the manifest job (the last) every other job."""
    if jobs[job]["kind"] == "manifest":
        return list(range(job))
    return list(jobs[job].get("after", []))


def run_job(plan: str, job: int, *after: Any) -> Dict[str, Any]:
    """One job on a worker, on a plan every worker sees at ``plan`` (``after``:
    the results it waits for, passed so Dask orders the tasks; unused)."""
    report = untold.run_tile_job(plan, job)
    return {"job": job, "written": report.written}


def run_job_at(plan_url: str, job: int, *after: Any) -> Dict[str, Any]:
    """One job of a plan stored at an fsspec URL: copies in the plan, the
    job's piece and the results it reads, runs the job in a temporary folder,
    copies its files to the plan's output URL and its result beside the plan."""
    with tempfile.TemporaryDirectory(prefix="untold-job-") as tmp:
        local_plan = os.path.join(tmp, "plan.json")
        if not _download(plan_url, local_plan):
            raise FileNotFoundError(f"no plan at {plan_url}")
        with open(local_plan, encoding="utf-8") as f:
            plan = json.load(f)
        output_url = plan["output"]
        plan["output"] = os.path.join(tmp, "out")  # where the job writes before the copy out
        with open(local_plan, "w", encoding="utf-8") as f:
            json.dump(plan, f)
        state_url, state = plan_url + ".d", local_plan + ".d"
        jobs = plan["jobs"]
        if 0 <= job < len(jobs):  # else the job's own error names the plan's job count
            if jobs[job].get("piece"):
                _download(_join(state_url, jobs[job]["piece"]), os.path.join(state, jobs[job]["piece"]))
            for k in waits_for(jobs, job):  # a missing one is named by the job's own error
                _download(_join(state_url, f"job-{k}.json"), os.path.join(state, f"job-{k}.json"))
        report = untold.run_tile_job(local_plan, job)
        written = []
        for path in report.written:
            relative = os.path.relpath(path, plan["output"]).replace(os.sep, "/")
            _upload(path, _join(output_url, relative))
            written.append(_join(output_url, relative))
        # The result last (the manifest job leaves none): a job counts as done only once its files are out.
        result = os.path.join(state, f"job-{job}.json")
        if os.path.exists(result):
            _upload(result, _join(state_url, f"job-{job}.json"))
        return {"job": job, "written": written}


def job_key(plan: Dict[str, Any], job: int, run: str) -> str:
    """The task's key on the dashboard: kind, tile, level, job index and the
    run (keys are unique per run: Dask hands back a live task of the same key)."""
    j = plan["jobs"][job]
    level = f"-{j['level']}" if j["kind"] == "lod" else ""
    return f"untold-{j['kind']}-{j['tile'] or 'manifest'}{level}-{job}-{run}"


def plan(source: str, output: str, plan_path: str, tiles: str = "grid:64", **options: Any) -> Dict[str, Any]:
    """Writes the plan (:func:`untold.plan_tiles`) for local paths or fsspec
    URLs; with URLs the source is downloaded, and the plan and its pieces
    uploaded to ``plan_path`` / ``plan_path.d``, from a temporary folder."""
    if not any(is_url(p) for p in (source, output, plan_path)):
        return untold.plan_tiles(source, output, plan_path, tiles, **options)
    if not all(is_url(p) for p in (output, plan_path)):
        raise ValueError("with fsspec URLs, OUTPUT and the plan must both be URLs")
    with tempfile.TemporaryDirectory(prefix="untold-plan-") as tmp:
        local_source = source
        if is_url(source):
            local_source = os.path.join(tmp, "source", source.rstrip("/").rsplit("/", 1)[-1])
            if not _download(source, local_source):
                raise FileNotFoundError(f"no source at {source}")
        local_plan = os.path.join(tmp, "plan.json")
        planned = untold.plan_tiles(local_source, os.path.join(tmp, "out"), local_plan, tiles, **options)
        planned["output"] = output  # jobs write here (run_job_at)
        planned["source"] = source
        with open(local_plan, "w", encoding="utf-8") as f:
            json.dump(planned, f, indent=1)
        pieces = os.path.join(local_plan + ".d", "pieces")
        for name in sorted(os.listdir(pieces)):
            _upload(os.path.join(pieces, name), _join(plan_path + ".d", "pieces", name))
        _upload(local_plan, plan_path)
        return planned


def cook(source: str, output: str, tiles: str = "grid:64", scheduler: Optional[str] = None, workers: int = 2,
         plan_path: Optional[str] = None, progress: bool = True, runner: Optional[Callable[..., Any]] = None,
         client: Any = None, **options: Any) -> Dict[str, Any]:
    """Plans the cook (:func:`plan`) and runs it on Dask (:func:`run_plan`).
    ``plan_path`` defaults to a new folder beside ``output`` (``output`` +
    ``.plan/plan.json`` for URLs)."""
    urls = any(is_url(p) for p in (source, output))
    if not urls:
        source, output = os.path.abspath(source), os.path.abspath(output)
    if plan_path is None:
        if urls:
            plan_path = _join(output.rstrip("/") + ".plan", "plan.json")
        else:
            parent = os.path.dirname(output) or "."
            os.makedirs(parent, exist_ok=True)
            plan_path = os.path.join(tempfile.mkdtemp(prefix="untold-plan-", dir=parent), "plan.json")
    started = time.monotonic()
    plan(source, output, plan_path, tiles, **options)
    r = run_plan(plan_path, scheduler, workers, progress, runner, client)
    r["seconds"] = time.monotonic() - started
    return r


def run_plan(plan_path: str, scheduler: Optional[str] = None, workers: int = 2, progress: bool = True,
             runner: Optional[Callable[..., Any]] = None, client: Any = None) -> Dict[str, Any]:
    """Runs a written plan's jobs on Dask: ``client``, else a Client of
    ``scheduler``, else a LocalCluster of ``workers`` processes (closed after).

    Each job is a task that depends on the tasks of its plan's ``after``
    jobs; the manifest's depends on every other. Returns {"plan", "jobs",
    "manifest", "seconds", "dashboard"}. ``runner(plan, job, *after)`` runs
    one job on a worker (default :func:`run_job`, or :func:`run_job_at` for
    a plan at a URL; tests pass one that misbehaves). Raises
    :class:`untold.UntoldError` for the first job that failed (its message
    names the job and the tile); the manifest is then not written.
    """
    from dask.distributed import Client, LocalCluster, as_completed

    remote = is_url(plan_path)
    if runner is None:
        runner = run_job_at if remote else run_job
    if remote:
        fs, path = _fs(plan_path)
        with fs.open(path, "r", encoding="utf-8") as f:
            plan = json.load(f)
    else:
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
        run = uuid.uuid4().hex[:8]
        futures: List[Any] = []
        for k in range(len(jobs)):
            # A LOD level waits for the level before it; the manifest for every
            # other job (Dask never runs it when one failed).
            after = [futures[a] for a in waits_for(jobs, k)]
            futures.append(client.submit(runner, plan_path, k, *after, key=job_key(plan, k, run), pure=False))
        for future in as_completed(futures):
            if future.status == "error":
                error = future.exception()  # the job's UntoldError, rule id and tile in its message
                client.cancel(futures)
                raise error
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        if own_cluster is not None:
            client.close()
            own_cluster.close()
    manifest_name = plan["options"]["manifest_name"]
    return {"plan": plan_path, "jobs": len(jobs),
            "manifest": _join(plan["output"], manifest_name) if remote else os.path.join(plan["output"], manifest_name),
            "seconds": time.monotonic() - started, "dashboard": dashboard}


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m untold.dask_cook", description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="the scene to cook (glTF, OBJ, FBX, .mdl ...): a path or an fsspec URL")
    p.add_argument("output", help="the output directory (tiles/, shared.untold, manifest.json): a path or an fsspec URL")
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
