"""`anonpsy tabular evaluate` on two 564-row, 12-column tables with 5,000 bootstrap replicates (target <= 30 s).

The two tables are synthetic (made here by the rules backend with two seeds from the DSM-5 social-anxiety
structure: sex, age and ten 0-4 items); no real data is involved. Each repeat runs the whole command in process
(read, audit, every metric, 5,000 bootstrap replicates, Markdown to stdout; no figures) and prints its wall time
and CPU time with the load average, because this machine is shared: a wall time far above the CPU time means
other work competed for the cores.

    python tests/bench/bench_tabular.py [--repeats 3] [--bootstrap 5000] [--rows 564]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from anonpsy.cli import main
from anonpsy.tabular.instruments import load_instrument
from anonpsy.tabular.personas import load_priors
from anonpsy.tabular.synth import synthesize

TARGET_S = 30.0


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap", type=int, default=5000)
    parser.add_argument("--rows", type=int, default=564)
    args = parser.parse_args()
    inst, priors = load_instrument("dsm5_social_anxiety"), load_priors()
    with tempfile.TemporaryDirectory() as tmp:
        real, syn = Path(tmp) / "real.csv", Path(tmp) / "syn.csv"
        real.write_text(synthesize(inst, args.rows, priors=priors, seed=1).to_csv(), encoding="utf-8")
        syn.write_text(synthesize(inst, args.rows, priors=priors, seed=2).to_csv(), encoding="utf-8")
        cmd = ["tabular", "evaluate", str(real), str(syn), "--instrument", inst.id, "--bootstrap",
               str(args.bootstrap)]
        print(f"tables: 2 x {args.rows} rows x {2 + inst.n_items} columns (synthetic); {args.bootstrap} replicates;"
              f" {os.cpu_count()} cores")
        walls = []
        for i in range(args.repeats):
            load = os.getloadavg()[0]
            c0, t0 = time.process_time(), time.perf_counter()
            result = CliRunner().invoke(main, cmd)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if result.exit_code != 0:
                sys.exit(f"evaluate failed: {result.output.strip()[:500]}")
            walls.append(wall)
            print(f"run {i + 1}: wall {wall:.2f} s, cpu {cpu:.2f} s, load average before {load:.2f}")
    print(f"median wall {statistics.median(walls):.2f} s, best {min(walls):.2f} s (target <= {TARGET_S:.0f} s): "
          f"{'OK' if min(walls) <= TARGET_S else 'OVER TARGET'}")


if __name__ == "__main__":
    main_bench()
