# anonpsy task runner. `just --list` shows the recipes.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Run the whole test suite (HYPOTHESIS_PROFILE=dev|ci|nightly picks the profile; default ci).
test *ARGS:
    HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}" python -m pytest {{ARGS}}

# ruff and mypy over the package and the tests.
lint:
    ruff check src tests
    mypy src

# Validate every rule file and run every pass/fail case.
rules-check:
    anonpsy rules check

# Regenerate the JSON Schemas derived from the models.
schemas:
    anonpsy schema export -o schemas/graph.v2.json

# Benchmarks (numbers are printed; targets are documented in README.md).
bench:
    python tests/bench/bench_core.py
    python tests/bench/bench_deid.py
    python tests/bench/bench_mask.py --mb 10

# Benchmarks that need the eval extra (bash .ci/eval.sh).
bench-eval:
    python tests/bench/bench_similarity.py
    python tests/bench/bench_evaluate.py

# Throughput of the llm backend against the scripted server (100 ms per call), and the fixture cases with 30 % of
# requests failing.
bench-llm:
    python tests/bench/bench_llm_throughput.py
    python tests/bench/bench_llm_throughput.py --processes 2
    python tests/bench/bench_llm_faults.py --rate 0.3

# Audio de-identification on synthetic espeak-ng dictations (needs espeak-ng and the audio extra).
bench-audio:
    python tests/bench/bench_audio.py --dictations 60
    python tests/bench/bench_audio.py --rtf --repeat 3

# Synthetic questionnaire tables: evaluate on two 564 x 12 tables with 5,000 bootstrap replicates (target <= 30 s).
bench-tabular:
    python tests/bench/bench_tabular.py

# RecordTwin end to end on MTSamples (needs ../shared/data and the twin extra).
bench-twin:
    python tests/bench/bench_twin.py --keep-duplicates

# Masking throughput on the PhysioNet dev half (anonpsy; Presidio beside it with the bench-presidio extra).
bench-mask:
    python tests/bench/bench_mask_physionet.py --jobs 2 --callgrind 100
