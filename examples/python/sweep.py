"""A first look at quiclab from Python (docs/PYTHON.md). Run from the repository root:

    .venv/bin/python examples/python/sweep.py            # locally
    .venv/bin/python examples/python/sweep.py --dask 2   # on a Dask LocalCluster

1. one scenario, twice, with a longer path the second time: flows as a DataFrame;
2. the handshake-latency plan (--quick): its points, then run it, then its summary.
"""

import sys

import quiclab


def main():
    scenario = "scenarios/examples/handshake_flight_loss.toml"
    base = quiclab.simulate(scenario)
    slow = quiclab.simulate(scenario, overrides={"topology.forward.delay_ms": 100})
    print(base)
    print(base.flows[["name", "handshake_done_s", "ttfb_s", "client_packets_lost"]])
    print("TTFB with a 100 ms forward delay:", slow.flows["ttfb_s"][0], "s")

    try:
        quiclab.simulate(scenario, overrides={"topology.forward.no_such_key": 1})
    except quiclab.QuiclabError as e:
        print("as expected, an error:", e)

    plan = quiclab.Plan.load("experiments/handshake-latency.toml", quick=True)
    print(plan)
    print(plan.points)

    executor = None
    if "--dask" in sys.argv:
        from distributed import Client, LocalCluster

        workers = int(sys.argv[sys.argv.index("--dask") + 1])
        executor = Client(LocalCluster(n_workers=workers, threads_per_worker=1))
    result = plan.run(executor=executor, out="out/python-example/handshake-latency")
    print(result)
    print(result.summary[["rtt_ms", "ttfb_s_mean", "ttfb_s_expected", "ttfb_s_deviation"]])
    print("report:", result.report)
    if executor is not None:
        executor.close()


if __name__ == "__main__":
    main()
