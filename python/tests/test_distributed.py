"""The distributed tile cook (docs/distributed.md): the plan's jobs give the
single-process cook's bytes, in any order their dependencies allow, through
the CLI, the bindings and a Dask LocalCluster of 2 worker processes - also
when a worker dies in the middle of the run, and with the data behind fsspec
URLs - and a job that fails stops the run without a manifest."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import untold
from conftest import tree, untold_cli

TILES = "grid:24"
# The test city at grid:24: 16 tiles, each a tile job, 3 LOD jobs (the
# default ratios) and an HLOD job; no shared bucket; the manifest.
JOBS = 16 * 5 + 1


def single(city, out):
    untold.cook_tiles(city, out, tiles=TILES)
    return tree(out)


def test_cli_jobs_in_any_order_are_byte_identical(tmp_path, city):
    cli = untold_cli()
    subprocess.run([cli, "cook", city, "--tiles", TILES, "-o", str(tmp_path / "one")], check=True, capture_output=True)
    plan = tmp_path / "plan.json"
    subprocess.run([cli, "cook", city, "--tiles", TILES, "-o", str(tmp_path / "many"), "--plan", str(plan)], check=True,
                   capture_output=True)
    assert not (tmp_path / "many" / "manifest.json").exists()
    listed = json.loads(subprocess.run([cli, "cook-tile", str(plan), "--list", "--json"], check=True,
                                       capture_output=True, text=True).stdout)["jobs"]
    assert [j["kind"] for j in listed].count("tile") == 16 and listed[-1]["kind"] == "manifest"
    # The manifest job first: refused, naming what is missing, and no manifest.
    early = subprocess.run([cli, "cook-tile", str(plan), "--job", str(len(listed) - 1)], capture_output=True, text=True)
    assert early.returncode == 1 and "have not finished" in early.stderr and "tile t_" in early.stderr
    assert not (tmp_path / "many" / "manifest.json").exists()
    # A LOD level before the level it starts from: refused, naming it.
    level2 = next(k for k, j in enumerate(listed) if j["kind"] == "lod" and j["level"] == 2)
    early = subprocess.run([cli, "cook-tile", str(plan), "--job", str(level2)], capture_output=True, text=True)
    assert early.returncode == 1 and f"lod {listed[level2]['tile']} 1 (job {level2 - 1})" in early.stderr
    # Any order the `after` lists allow (here: by LOD level, each level in reverse);
    # one job twice (a retry) changes nothing.
    for k in sorted(range(len(listed) - 1), key=lambda k: (listed[k].get("level", 0), -k)):
        subprocess.run([cli, "cook-tile", str(plan), "--job", str(k), "--quiet"], check=True)
    subprocess.run([cli, "cook-tile", str(plan), "--job", "0", "--quiet"], check=True)
    subprocess.run([cli, "cook-tile", str(plan), "--job", str(len(listed) - 1), "--quiet"], check=True)
    one, many = tree(tmp_path / "one"), tree(tmp_path / "many")
    assert sorted(one) == sorted(many) and one == many


def damage(piece):
    """Cuts a piece file to a third, as a failed copy would leave it."""
    data = piece.read_bytes()
    piece.write_bytes(data[: len(data) // 3])


def test_bindings_jobs_are_byte_identical_and_read_only_their_piece(tmp_path, city):
    expected = single(city, tmp_path / "one")
    plan = untold.plan_tiles(city, tmp_path / "many", tmp_path / "plan.json", tiles=TILES)
    with open(city, "a") as f:  # the source changes after planning: jobs read the pieces cut from the planned one
        f.write("v 0 0 0\n")
    for k in range(len(plan["jobs"])):
        untold.run_tile_job(tmp_path / "plan.json", k)
    assert tree(tmp_path / "many") == expected
    # A damaged piece: the container reader's rule id, the job and tile named.
    damage(tmp_path / "plan.json.d" / plan["jobs"][0]["piece"])
    with pytest.raises(untold.UntoldError) as e:
        untold.run_tile_job(tmp_path / "plan.json", 0)
    assert e.value.rule_id.startswith("R-") and str(e.value).startswith(f"job 0 (tile {plan['jobs'][0]['tile']}): piece ")


# ---- Dask -----------------------------------------------------------------------------------

distributed = pytest.importorskip("distributed")
from untold import dask_cook  # noqa: E402


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def kill_once(plan, job, *after):
    """A job runner whose first tile job kills its own worker process (once,
    across processes: a marker file beside the plan), so Dask must run it,
    and the jobs that worker held, elsewhere."""
    marker = os.path.join(os.path.dirname(plan), "killed-once")
    kinds = json.load(open(plan))["jobs"]
    if kinds[job]["kind"] == "tile" and not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write(str(os.getpid()))
        time.sleep(0.5)  # let the other worker get going: the kill lands mid-run
        os.kill(os.getpid(), signal.SIGKILL)
    return dask_cook.run_job(plan, job, *after)


def test_dask_cook_is_byte_identical(tmp_path, city, client):
    expected = single(city, tmp_path / "one")
    r = dask_cook.cook(city, str(tmp_path / "dask"), TILES, client=client, plan_path=str(tmp_path / "p" / "plan.json"),
                       progress=False)
    assert r["jobs"] == JOBS and r["dashboard"]
    assert tree(tmp_path / "dask") == expected


def test_dask_cook_through_fsspec_urls(tmp_path, city, client):
    """Source, output and plan as fsspec URLs: jobs copy in their piece and
    copy out their files; nothing is written where the plan's local folders were."""
    expected = single(city, tmp_path / "one")
    url = f"file://{tmp_path}/bucket"
    r = dask_cook.cook(f"file://{city}", f"{url}/out", TILES, client=client, plan_path=f"{url}/plan/plan.json",
                       progress=False)
    assert r["jobs"] == JOBS and r["manifest"] == f"{url}/out/manifest.json"
    assert tree(tmp_path / "bucket" / "out") == expected
    plan = json.loads((tmp_path / "bucket" / "plan" / "plan.json").read_text())
    assert plan["output"] == f"{url}/out" and plan["source"] == f"file://{city}"
    state = tmp_path / "bucket" / "plan" / "plan.json.d"
    assert sorted(p.name for p in state.glob("job-*.json")) == sorted(f"job-{k}.json" for k in range(JOBS - 1))
    assert not list((tmp_path / "bucket").rglob("*.tmp-*"))  # every copy out was renamed into place


def test_dask_cook_survives_a_killed_worker(tmp_path, city, client):
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this test module
    expected = single(city, tmp_path / "one")
    dask_cook.cook(city, str(tmp_path / "dask"), TILES, client=client, plan_path=str(tmp_path / "p" / "plan.json"),
                   progress=False, runner=kill_once)
    assert (tmp_path / "p" / "killed-once").exists()  # a worker did die
    assert tree(tmp_path / "dask") == expected
    client.wait_for_workers(2)


def test_dask_cook_fails_on_bad_input_without_a_manifest(tmp_path, city, client):
    plan_path = tmp_path / "p" / "plan.json"
    plan = untold.plan_tiles(city, tmp_path / "out", plan_path, tiles=TILES)
    # One tile's piece is damaged after planning (cut short, as a failed copy
    # to shared storage leaves it): its jobs refuse it with the reader's rule id.
    damage(tmp_path / "p" / "plan.json.d" / plan["jobs"][0]["piece"])
    with pytest.raises(untold.UntoldError) as e:
        dask_cook.run_plan(str(plan_path), client=client, progress=False)
    assert e.value.rule_id.startswith("R-"), str(e.value)
    assert f" {plan['jobs'][0]['tile']}" in str(e.value) and str(e.value).startswith("job ")
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_dask_cook_command_line(tmp_path, city):
    expected = single(city, tmp_path / "one")
    r = subprocess.run([sys.executable, "-m", "untold.dask_cook", city, str(tmp_path / "cli"), "--tiles", TILES,
                        "--workers", "2", "--plan", str(tmp_path / "p" / "plan.json")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{JOBS} jobs" in r.stderr and "Dask dashboard: http://" in r.stderr and f"{JOBS}/{JOBS}" in r.stderr  # the tqdm bar
    assert r.stdout.startswith(f"cooked {city} -> {tmp_path / 'cli'}: {JOBS} jobs in ")
    assert tree(tmp_path / "cli") == expected
    with open(city, "wb") as f:  # a source that cannot be planned: exit 1 with the rule id
        f.write(b"UMD2" + bytes(8))
    r = subprocess.run([sys.executable, "-m", "untold.dask_cook", city, str(tmp_path / "bad"), "--quiet"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "U3D-TRUNC" in r.stderr and not (tmp_path / "bad" / "manifest.json").exists()
