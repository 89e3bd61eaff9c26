"""The ``mask``, ``mask-record`` and ``mask-eval`` commands.

Bad input (missing, empty, binary, not UTF-8 or too large; unknown schema; undescribed record field; missing
HMAC key) is reported as one line ``CODE location: message`` on stderr with exit status 2 and no traceback.
Files given with ``-o``/``--json``/``--report`` are written atomically (temporary file, then rename), so a
failed run leaves no partial output file. Inputs larger than ``$ANONPSY_MAX_INPUT_BYTES`` (default 64 MiB; per
record for JSONL) are refused.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import click

from anonpsy.cliutil import handle_errors
from anonpsy.errors import (
    E100_MISSING_FILE,
    E101_EMPTY_INPUT,
    E105_NOT_UTF8,
    E106_BINARY,
    E107_TOO_LARGE,
    E108_MALFORMED_JSON,
    E109_BAD_OPTION,
    AnonpsyError,
)
from anonpsy.phi.operators import OPERATOR_NAMES, Operator, build_operator, load_key
from anonpsy.phi.pipeline import POLICIES
from anonpsy.yamlio import write_atomic

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
_KEYED = ("hash", "dateshift", "surrogate")


_handle_errors = handle_errors


def max_input_bytes() -> int:
    """The input size limit in bytes (``$ANONPSY_MAX_INPUT_BYTES`` or 64 MiB)."""
    raw = os.environ.get("ANONPSY_MAX_INPUT_BYTES")
    if raw and raw.isdigit() and int(raw) > 0:
        return int(raw)
    return DEFAULT_MAX_BYTES


def _name(path: str) -> str:
    return "stdin" if path == "-" else Path(path).name


def _decode(data: bytes, where: str) -> str:
    if b"\x00" in data[:65536]:
        raise AnonpsyError(E106_BINARY, "input looks binary (NUL bytes); give a UTF-8 text file", where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnonpsyError(
            E105_NOT_UTF8, f"input is not UTF-8 (byte {exc.start}); convert it to UTF-8", where
        ) from None


def read_input(path: str) -> str:
    """Read a whole input (``-`` is stdin) with the missing/size/binary/UTF-8/empty checks."""
    limit = max_input_bytes()
    where = _name(path)
    if path == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        p = Path(path)
        if not p.is_file():
            raise AnonpsyError(E100_MISSING_FILE, "input file not found", where)
        if p.stat().st_size > limit:
            raise AnonpsyError(E107_TOO_LARGE, f"input is larger than {limit} bytes; split it", where)
        data = p.read_bytes()
    if len(data) > limit:
        raise AnonpsyError(E107_TOO_LARGE, f"input is larger than {limit} bytes; split it", where)
    text = _decode(data, where)
    if not text.strip():
        raise AnonpsyError(E101_EMPTY_INPUT, "input is empty", where)
    return text.removeprefix("\ufeff")


def _iter_lines(path: str) -> Iterator[tuple[int, str]]:
    """Stream the lines of a JSONL input with the per-line checks (``-`` is stdin)."""
    limit = max_input_bytes()
    where = _name(path)
    if path == "-":
        stream: IO[bytes] = sys.stdin.buffer
        close = False
    else:
        p = Path(path)
        if not p.is_file():
            raise AnonpsyError(E100_MISSING_FILE, "input file not found", where)
        stream = p.open("rb")
        close = True
    try:
        seen = False
        for n, raw in enumerate(stream, 1):
            if len(raw) > limit:
                raise AnonpsyError(E107_TOO_LARGE, f"record larger than {limit} bytes", f"{where}:{n}")
            line = _decode(raw, f"{where}:{n}")
            if n == 1:
                line = line.removeprefix("\ufeff")
            if line.strip():
                seen = True
                yield n, line
        if not seen:
            raise AnonpsyError(E101_EMPTY_INPUT, "input is empty", where)
    finally:
        if close:
            stream.close()


@contextmanager
def _atomic_stream(output: Path | None) -> Iterator[IO[str]]:
    """A text stream to ``output`` (temporary file renamed on success, removed on failure) or stdout."""
    if output is None:
        yield sys.stdout
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, output)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(output, text)


def _build_llm(profile: str, chunk_words: int, overlap: int, passes: int) -> tuple[Any, Any]:
    """(client, detector) for ``--llm``: a bundled profile name, a profile file or a configuration file."""
    from anonpsy.llm import LLMClient, LLMConfig, load_config
    from anonpsy.phi.llm_detect import LLMDetector

    candidate = Path(profile)
    if candidate.is_file():
        try:
            config = load_config(candidate)
        except AnonpsyError:
            config = LLMConfig(profile=str(candidate))
    else:
        config = LLMConfig(profile=profile)
    client = LLMClient(config)
    try:
        detector = LLMDetector(client, chunk_words=chunk_words, overlap=overlap, passes=passes)
    except ValueError as exc:
        client.close()
        raise AnonpsyError(E109_BAD_OPTION, str(exc), "--chunk-words/--overlap/--passes") from None
    return client, detector


def _operator(name: str, key_file: Path | None, vault_path: Path | None) -> tuple[Operator, Any]:
    """Build the operator (and the vault for surrogates)."""
    if vault_path is not None and name != "surrogate":
        raise AnonpsyError(E109_BAD_OPTION, "--vault applies only to --operator surrogate", "--vault")
    key = load_key(key_file=key_file, purpose=name) if name in _KEYED else None
    vault = None
    if name == "surrogate":
        from anonpsy.phi.vault import SurrogateVault

        assert key is not None
        vault = SurrogateVault(key, vault_path if vault_path is not None else ":memory:")
    return build_operator(name, key=key, vault=vault), vault


_LLM_OPTIONS = [
    click.option(
        "--llm",
        "llm_profile",
        metavar="PROFILE",
        help="Also detect with a language model (profile name, "
        "profile file or configuration file); text stays on this machine unless allowed otherwise.",
    ),
    click.option(
        "--on-llm-failure",
        type=click.Choice(["error", "mask_chunk"]),
        default="error",
        show_default=True,
        help="A chunk the model could not check: fail the document, or mask the chunk wholesale.",
    ),
    click.option("--chunk-words", type=int, default=150, show_default=True, help="Words per LLM chunk."),
    click.option("--overlap", type=int, default=30, show_default=True, help="Words shared by consecutive chunks."),
    click.option("--passes", type=int, default=2, show_default=True, help="LLM passes per chunk."),
]


def _llm_options(fn: F) -> F:
    for option in reversed(_LLM_OPTIONS):
        fn = option(fn)
    return fn


@click.command("mask")
@click.argument("input_path", metavar="IN")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Output file (default stdout).")
@click.option(
    "--operator",
    "operator_name",
    type=click.Choice(list(OPERATOR_NAMES)),
    default="mask",
    show_default=True,
    help="How identifiers are replaced.",
)
@click.option(
    "--vault",
    "vault_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Surrogate vault (sqlite) that keeps surrogates consistent across documents and runs.",
)
@click.option("--patient-id", help="Patient id keying date shifts (JSONL records may carry their own).")
@click.option(
    "--input-format",
    type=click.Choice(["text", "jsonl"]),
    default="text",
    show_default=True,
    help='text: one document; jsonl: one {"id", "text", "patient_id"?} per line.',
)
@click.option(
    "--key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File holding the HMAC secret (else $ANONPSY_HMAC_KEY or $ANONPSY_HMAC_KEY_FILE).",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the surrogate consistency report (clusters, surrogate per cluster) as JSON.",
)
@click.option(
    "--key-map",
    is_flag=True,
    help="Include the original values in the report (the report then holds identifiers: protect it).",
)
@click.option(
    "--policy",
    type=click.Choice(list(POLICIES)),
    default="identifiers",
    show_default=True,
    help="identifiers: every direct identifier at every granularity (dates down to a bare year, places up to "
    "states and countries, institutions, ages over 89), as de-identification gold standards mark them; "
    "safe-harbor: HIPAA Safe Harbor identifiers judged by value (ages over 89, dates finer than a year, "
    "places below state level, institutions); all: every detected span, quasi-identifiers included.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes detecting identifiers in JSONL input (output keeps the input order).",
)
@_llm_options
@_handle_errors
def mask(
    input_path: str,
    output: Path | None,
    operator_name: str,
    vault_path: Path | None,
    patient_id: str | None,
    input_format: str,
    key_file: Path | None,
    report_path: Path | None,
    key_map: bool,
    llm_profile: str | None,
    on_llm_failure: str,
    chunk_words: int,
    overlap: int,
    passes: int,
    policy: str,
    jobs: int,
) -> None:
    """Detect identifiers in IN (a text file, or - for stdin) and replace them.

    Text input gives the masked text. JSONL input gives one JSON line per record with the masked `text` and
    its `spans` (`start`/`end` in the input, `out_start`/`out_end` in the output, `type`, `source`), streamed;
    with `--jobs N` the rule detection runs in N worker processes while this process replaces the spans in
    input order (so surrogates stay consistent and the output order is the input order). `hash`, `dateshift`
    and `surrogate` need an HMAC key ($ANONPSY_HMAC_KEY or a key file).

    \b
    Example:
      ANONPSY_HMAC_KEY=$(cat secret) anonpsy mask notes.jsonl --input-format jsonl \\
          --operator surrogate --vault vault.sqlite -o masked.jsonl
    """
    from anonpsy.phi.pipeline import mask_text

    if (report_path or key_map) and operator_name != "surrogate":
        raise AnonpsyError(E109_BAD_OPTION, "--report and --key-map apply only to --operator surrogate", "--report")
    if input_format == "text":
        text = read_input(input_path)  # input errors come before key and model errors
    operator, vault = _operator(operator_name, key_file, vault_path)
    relex = getattr(operator, "relex", None)
    if relex is not None and key_map:
        relex.collect_values = True
    client = detector = None
    if llm_profile:
        client, detector = _build_llm(llm_profile, chunk_words, overlap, passes)
    ok = False
    try:
        if input_format == "text":
            result = mask_text(
                text,
                operator=operator,
                patient_id=patient_id,
                llm=detector,
                on_llm_failure=on_llm_failure,  # type: ignore[arg-type]
                policy=policy,  # type: ignore[arg-type]
            )
            _emit(result.text, output)
        else:
            settings = _MaskSettings(operator, patient_id, detector, on_llm_failure, policy)
            whole = jobs > 1 and vault is None and detector is None and _can_fork()
            with _atomic_stream(output) as out:
                if whole:
                    # Stateless operators: the workers mask whole records; this process writes them in order.
                    with _masked_lines(input_path, jobs, settings) as lines:
                        for line_out in lines:
                            out.write(line_out)
                else:
                    with _detections(input_path, jobs, detector is None) as records:
                        for n, rec, found in records:
                            out.write(_mask_record(n, rec, settings, found))
                            if vault is not None and n % 1000 == 0:
                                vault.commit()
        if report_path is not None and relex is not None:
            write_atomic(report_path, relex.report_json(include_values=key_map))
        ok = True
    finally:
        if vault is not None:
            vault.close(commit=ok)
        if client is not None:
            client.close()


@dataclass(frozen=True)
class _MaskSettings:
    """What masking one JSONL record needs besides the record."""

    operator: Operator
    patient_id: str | None
    detector: Any
    on_llm_failure: str
    policy: str


def _mask_record(n: int, rec: dict[str, Any], settings: _MaskSettings, found: list[Any] | None) -> str:
    """The output JSON line of one record (``found``: rule spans detected elsewhere, or None)."""
    from anonpsy.phi.pipeline import mask_text

    pid = rec.get("patient_id", settings.patient_id)
    result = mask_text(
        rec["text"],
        operator=settings.operator,
        patient_id=None if pid is None else str(pid),
        llm=settings.detector,
        on_llm_failure=settings.on_llm_failure,  # type: ignore[arg-type]
        document_id=str(rec.get("id", n)),
        policy=settings.policy,  # type: ignore[arg-type]
        analyzer=None if found is None else _given(found),
    )
    row = {"id": rec.get("id", n), "text": result.text, "spans": [s.as_dict() for s in result.spans]}
    return json.dumps(row, ensure_ascii=False) + "\n"


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


#: The settings forked workers mask with (set by the parent right before it forks them).
_WORKER_SETTINGS: _MaskSettings | None = None


def _mask_line(item: tuple[int, str, str]) -> tuple[str | None, tuple[str, str, str | None] | None]:
    """Worker: parse and mask one JSONL line with the inherited settings (errors come back as data)."""
    n, line, source = item
    assert _WORKER_SETTINGS is not None
    try:
        rec = _parse_record(n, line, source)
    except AnonpsyError as err:
        return None, (err.code, err.message, err.location)
    return _mask_record(n, rec, _WORKER_SETTINGS, None), None


@contextmanager
def _masked_lines(input_path: str, jobs: int, settings: _MaskSettings) -> Iterator[Iterator[str]]:
    """Output lines in input order, masked by ``jobs`` forked worker processes."""
    import multiprocessing

    global _WORKER_SETTINGS
    source = _name(input_path)
    _warm_worker()  # load the rules once here; forked workers share them
    _WORKER_SETTINGS = settings
    gc.freeze()  # keep the collector off the shared rule tables, so forked pages stay shared
    pool = multiprocessing.get_context("fork").Pool(jobs)
    try:

        def results() -> Iterator[str]:
            items = ((n, line, source) for n, line in _iter_lines(input_path))
            for line_out, error in pool.imap(_mask_line, items, chunksize=16):
                if error is not None:
                    raise AnonpsyError(*error)
                assert line_out is not None
                yield line_out

        yield results()
    finally:
        pool.terminate()
        pool.join()
        gc.unfreeze()
        _WORKER_SETTINGS = None


def _given(spans: list[Any]) -> Callable[[str], list[Any]]:
    """An analyzer that returns spans found elsewhere (by a worker process)."""

    def analyzer(_text: str) -> list[Any]:
        return spans

    return analyzer


def _parse_record(n: int, line: str, source: str) -> dict[str, Any]:
    """One JSONL record with a "text" string, or an E108 error naming the line."""
    where = f"{source}:{n}"
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        raise AnonpsyError(E108_MALFORMED_JSON, "line is not valid JSON", where) from None
    if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
        raise AnonpsyError(E108_MALFORMED_JSON, 'each line needs a "text" string', where)
    return rec


_SpanTuple = tuple[int, int, str, str, float, str]


def _detect_line(
    item: tuple[int, str, str],
) -> tuple[int, Any, list[_SpanTuple] | None, tuple[str, str, str | None] | None]:
    """Worker: parse one JSONL line and run the rule analyzer on its text (errors come back as data)."""
    from anonpsy.phi import pipeline

    n, line, source = item
    try:
        rec = _parse_record(n, line, source)
    except AnonpsyError as err:
        return n, None, None, (err.code, err.message, err.location)
    found = pipeline.default_analyzer(rec["text"])
    spans = [(s.start, s.end, s.type, s.source, s.score, s.recognizer) for s in found]
    return n, rec, spans, None


def _warm_worker() -> None:
    from anonpsy.phi.analyzer import Analyzer

    Analyzer.default()


@contextmanager
def _detections(
    input_path: str, jobs: int, parallel_ok: bool
) -> Iterator[Iterator[tuple[int, dict[str, Any], list[Any] | None]]]:
    """``(line number, record, rule spans or None)`` in input order; rule spans come from ``jobs`` worker
    processes when more than one is asked for (None: the caller runs the analyzer itself)."""
    source = _name(input_path)
    if jobs <= 1 or not parallel_ok:
        yield ((n, _parse_record(n, line, source), None) for n, line in _iter_lines(input_path))
        return
    import multiprocessing

    from anonpsy.phi.spans import Span

    _warm_worker()  # load the rules once here; forked workers share them
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    pool = ctx.Pool(jobs, initializer=_warm_worker)
    try:

        def results() -> Iterator[tuple[int, dict[str, Any], list[Any] | None]]:
            items = ((n, line, source) for n, line in _iter_lines(input_path))
            for n, rec, spans, error in pool.imap(_detect_line, items, chunksize=8):
                if error is not None:
                    raise AnonpsyError(*error)
                yield n, rec, [Span(*s) for s in spans or ()]

        yield results()
    finally:
        pool.terminate()
        pool.join()


@click.command("mask-record")
@click.argument("record_path", metavar="RECORD")
@click.option("--schema", "schema_name", required=True, help="Record schema name (schemas/records/<NAME>.json).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Output file (default stdout).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "jsonl", "csv"]),
    help="Input and output format (default from the file extension, else json).",
)
@click.option(
    "--operator",
    "operator_name",
    type=click.Choice(list(OPERATOR_NAMES)),
    default="mask",
    show_default=True,
    help="Operator for autoDeID (free-text) fields.",
)
@click.option(
    "--vault",
    "vault_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Surrogate vault for --operator surrogate.",
)
@click.option("--patient-id", help="Patient id keying date shifts in free-text fields.")
@click.option("--key-file", type=click.Path(dir_okay=False, path_type=Path), help="File holding the HMAC secret.")
@_handle_errors
def mask_record(
    record_path: str,
    schema_name: str,
    output: Path | None,
    fmt: str | None,
    operator_name: str,
    vault_path: Path | None,
    patient_id: str | None,
    key_file: Path | None,
) -> None:
    """De-identify structured records (JSON, JSONL or CSV) field by field under a record schema.

    Each field's `x-deid` action in the schema decides: passThrough, shouldMask, shouldHash (needs the HMAC
    key) or autoDeID (free text through the detector). A field the schema does not describe stops the run
    (M103, naming the field path); the output is validated against the schema.

    \b
    Example:
      ANONPSY_HMAC_KEY=$(cat secret) anonpsy mask-record fixtures/records/psych_encounter.json \\
          --schema psych_encounter -o encounter.deid.json
    """
    from anonpsy.phi.operators import HashOperator
    from anonpsy.phi.pipeline import mask_text
    from anonpsy.phi.records import deidentify_record, dump_records, load_record_schema, parse_records

    schema = load_record_schema(schema_name)
    text = read_input(record_path)
    if fmt is None:
        suffix = Path(record_path).suffix.lower().lstrip(".")
        fmt = suffix if suffix in ("json", "jsonl", "csv") else "json"
    records, header = parse_records(text, fmt, schema)  # type: ignore[arg-type]
    hasher = HashOperator(load_key(key_file=key_file, purpose="shouldHash fields")) if schema.uses_hash else None
    operator, vault = _operator(operator_name, key_file, vault_path)
    ok = False
    try:

        def text_masker(value: str, pointer: str) -> str:
            return mask_text(value, operator=operator, patient_id=patient_id).text

        out = [
            deidentify_record(rec, schema, text_masker=text_masker, hasher=hasher, index=i)
            for i, rec in enumerate(records)
        ]
        single = fmt == "json" and not text.lstrip().startswith("[")
        _emit(dump_records(out, fmt, header, single=single), output)  # type: ignore[arg-type]
        ok = True
    finally:
        if vault is not None:
            vault.close(commit=ok)


@click.command("mask-eval")
@click.argument("gold_path", metavar="GOLD", type=click.Path(path_type=Path))
@click.argument("pred_path", metavar="PRED", required=False, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "brat", "asq", "presidio", "physionet"]),
    default="jsonl",
    show_default=True,
    help="Format of GOLD (physionet: the deid corpus directory with id.text and id-phi.phrase).",
)
@click.option(
    "--metrics",
    type=click.Choice(["matching", "coverage"]),
    help="matching: entity matching P/R/F1; coverage: characters of each gold span hidden, documents that "
    "still leak, and the deid stat.pm figures (default: coverage for physionet, else matching).",
)
@click.option(
    "--policy",
    type=click.Choice(list(POLICIES)),
    default="identifiers",
    show_default=True,
    help="Masking policy of the predictions made here (without PRED); see `anonpsy mask --help`.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the metrics as JSON to this file (- for stdout instead of the table).",
)
@_llm_options
@_handle_errors
def mask_eval(
    gold_path: Path,
    pred_path: Path | None,
    fmt: str,
    metrics: str | None,
    policy: str,
    json_path: Path | None,
    llm_profile: str | None,
    on_llm_failure: str,
    chunk_words: int,
    overlap: int,
    passes: int,
) -> None:
    """Score PHI detection against a gold corpus.

    Matching metrics: precision, recall and F1 (lenient and strict, type-agnostic and type-aware), token
    recall and all-or-nothing recall per document and per type. Coverage metrics: entity recall (a gold span
    counts when at least half its characters are masked), strict recall (all of them), precision (predicted
    spans overlapping a gold span), character-level figures, document all-or-nothing, per gold label, the
    documents that still leak by label, and the figures of the PhysioNet deid package's stat.pm.

    PRED is span JSONL as written by `anonpsy mask --input-format jsonl` (spans in input offsets), or a BRAT
    directory; without PRED, the rule analyzer (and the model with --llm) runs on the gold texts.

    \b
    Example:
      anonpsy mask-eval ../shared/data/physionet-deid-dev --format physionet --json physionet.json
    """
    from rich.console import Console

    from anonpsy.phi import evaluate as ev
    from anonpsy.phi import readers, scoring

    gold = _read_docs(gold_path, fmt)
    if pred_path is None:
        preds = _predict(gold, llm_profile, on_llm_failure, chunk_words, overlap, passes, policy)
    elif pred_path.is_dir():
        preds = readers.read_brat_dir(pred_path)
    else:
        preds = readers.parse_span_jsonl(read_input(str(pred_path)), source=pred_path.name, check_bounds=False)
    if (metrics or ("coverage" if fmt == "physionet" else "matching")) == "coverage":
        cov = scoring.score_coverage(gold, preds)
        stat = scoring.deid_stat(gold, preds)
        payload = cov.as_dict()
        payload["deid_stat"] = {
            "true_positives": stat.true_positives,
            "false_positives": stat.false_positives,
            "false_negatives": stat.false_negatives,
            "sensitivity": stat.sensitivity,
            "ppv": stat.ppv,
        }
        table = scoring.render_coverage(cov, stat)
    else:
        report = ev.evaluate(gold, preds)
        payload = report.as_dict()
        table = ev.render_table(report)
    data = json.dumps(payload, indent=2) + "\n"
    if json_path is not None and str(json_path) == "-":
        click.echo(data, nl=False)
        return
    if json_path is not None:
        write_atomic(json_path, data)
    Console(width=120).print(table)


def _read_docs(path: Path, fmt: str) -> list[Any]:
    from anonpsy.phi import readers

    if fmt == "brat":
        if not path.is_dir():
            raise AnonpsyError(E100_MISSING_FILE, "BRAT gold must be a directory of .txt/.ann files", path.name)
        return readers.read_brat_dir(path)
    if fmt == "physionet":
        if not path.exists():
            raise AnonpsyError(E100_MISSING_FILE, "PhysioNet corpus not found", path.name)
        return readers.read_physionet(path)
    text = read_input(str(path))
    if fmt == "asq":
        return readers.parse_asq(text, source=path.name)
    if fmt == "presidio":
        return readers.parse_presidio(text, source=path.name)
    return readers.parse_span_jsonl(text, source=path.name)


def _predict(
    gold: list[Any],
    llm_profile: str | None,
    on_llm_failure: str,
    chunk_words: int,
    overlap: int,
    passes: int,
    policy: str = "identifiers",
) -> list[Any]:
    from anonpsy.phi.operators import MaskOperator
    from anonpsy.phi.pipeline import mask_text
    from anonpsy.phi.readers import Document, GoldSpan

    client = detector = None
    if llm_profile:
        client, detector = _build_llm(llm_profile, chunk_words, overlap, passes)
    masker = MaskOperator()
    try:
        out = []
        for doc in gold:
            result = mask_text(
                doc.text,
                operator=masker,
                llm=detector,
                document_id=doc.id,
                on_llm_failure=on_llm_failure,  # type: ignore[arg-type]
                policy=policy,  # type: ignore[arg-type]
            )
            out.append(Document(doc.id, doc.text, tuple(GoldSpan(s.start, s.end, s.type) for s in result.spans)))
        return out
    finally:
        if client is not None:
            client.close()


COMMANDS = [mask, mask_record, mask_eval]
