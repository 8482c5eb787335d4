"""Which landed files a round reads (DFSPathSelector's rule), and a check of each before Spark."""

from __future__ import annotations

import io
import json

from hudi_cdc.common import storage
from hudi_cdc.common.causes import first_line
from hudi_cdc.common.properties import local_path
from hudi_cdc.jobs.stream.errors import JobInputError

IGNORED_PREFIXES = storage.IGNORED_PREFIXES
SourceFile = tuple[str, int, int]  # (local path or s3:// URI, modification time in ms, size)


def _walk(root: str) -> list[SourceFile]:
    """Local files by os.walk, S3 objects by a listing (LastModified as the modification time)."""
    return storage.walk_files(root)


def list_source_files(root: str, checkpoint: str | None, source_limit: int,
                      missing_ok: bool = False, roots: list[str] | None = None) -> tuple[list[SourceFile], str | None]:
    """Files newer than the checkpoint, oldest first, as DFSPathSelector picks them.

    Returns ([(path, mtime_ms, size)], new_checkpoint). Unlike DFSPathSelector, a round always
    takes at least one file, so a file larger than the source limit cannot stall the stream.
    ``missing_ok``: no landing folder is no file (the stream of a table bootstrapped empty, whose
    source has landed nothing yet, waits); else it is an error. ``roots``: a routed table's shard
    folders (routed.py), read as one: their files merged oldest first, under the one checkpoint.
    """
    locals_ = [local_path(r) for r in (roots if roots is not None else [root])]
    locals_ = [r for r in locals_ if storage.is_dir(r)]
    if not locals_:
        if missing_ok:
            return [], checkpoint
        raise JobInputError(f"landing directory {root} does not exist" if roots is None else
                            f"no landing directory of any source table of the route under {root}")
    last = int(checkpoint) if checkpoint not in (None, "") else None
    picked: list[SourceFile] = []
    total = 0
    walked = [f for r in locals_ for f in _walk(r)]
    walked.sort(key=lambda f: (f[1], f[0]))
    for path, mtime, size in walked:
        if last is not None and mtime <= last:
            continue
        if picked and total + size > source_limit and mtime != picked[-1][1]:
            break  # never split files sharing one modification time across rounds
        picked.append((path, mtime, size))
        total += size
    new_cp = str(picked[-1][1]) if picked else checkpoint
    return picked, new_cp


def _missing_key(record: dict, record_keys: list[str]) -> bool:
    """Hudi's key generators refuse a record whose key fields are all null or empty (a TRUNCATE's
    row, `__op='t'`, carries a placeholder key: the round never writes it, truncate.py)."""
    return record.get("__op") != "t" and all(record.get(k) in (None, "") for k in record_keys)


def landed_bytes(path: str) -> bytes:
    """A landed file's bytes; a vanished or empty (0-byte) file is one JobInputError naming it."""
    data = storage.read_bytes(path)
    if data is None:
        raise JobInputError(f"landing file {path} vanished between listing and reading (moved or deleted "
                            "by another process); nothing was written, the next round lists again")
    if not data:
        raise JobInputError(f"empty (0-byte) Avro file {path}: not an Avro container file (an upload "
                            "cut short?); replace or remove it")
    return data


def read_records(path: str) -> tuple[dict, list[dict]]:
    """A landed file's (writer schema, records), by fastavro (verify's replay of the landed events,
    sources/history_verify.py); a corrupt file is one JobInputError naming it."""
    import fastavro

    try:
        reader = fastavro.reader(io.BytesIO(landed_bytes(path)))
        schema = reader.writer_schema
        if not isinstance(schema, dict):
            raise JobInputError(f"the writer schema of {path} is not an Avro record")
        return schema, [r for r in reader if isinstance(r, dict)]
    except JobInputError:
        raise
    except Exception as exc:  # fastavro raises many types for corrupt input
        raise JobInputError(f"corrupt or truncated Avro file {path}: {first_line(exc)}") from None


SYNC_SIZE = 16  # an Avro container file's sync marker: after its header and after every block


def validate_avro_files(files: list[SourceFile], required_fields: list[str], record_keys: list[str] = (),  # type: ignore[assignment]
                        reader_schema: dict | None = None, every_record: bool = True,
                        groups: dict[str, list[str]] | None = None) -> list[tuple[str, dict]]:
    """Read every file through fastavro before Spark touches the table: a file that vanished since
    the listing, an empty (0-byte) or corrupt or truncated file, one whose schema lacks a required
    field or cannot be read with the registry's schema (`reader_schema`, Avro's resolution rules),
    or a record without a record key, fails the round with the file's name, and nothing is written.
    A header-only file (a schema, no records) is valid and adds nothing. Returns the distinct
    writer schemas seen, each with the first file that carries it.

    `every_record=False` decodes only each file's first record (header, schema, resolution against
    the registry's schema) and checks that the file ends with its sync marker (Spark reads a file cut off
    in a later block without a word, as its whole blocks: 2,720 of 3,000 records, measured): the round
    then checks keys and readability of the rest in Spark's own
    pass over the files and calls this again with every record only when that pass finds a problem,
    to name the file and record (decoding a million records in Python took 8-11 s of a 28 s
    bootstrap). `groups`, when given, receives each distinct writer schema's files (schema JSON ->
    paths, oldest first): a round whose files carry several schemas reads each group alone."""
    import fastavro  # an install requirement of hudi-cdc

    parsed_reader = fastavro.parse_schema(reader_schema) if reader_schema else None
    schemas: dict[str, tuple[str, dict]] = {}
    for path, _, _ in files:
        data = landed_bytes(path)
        schema = None
        try:
            with io.BytesIO(data) as fh:
                reader = fastavro.reader(fh)
                schema = reader.writer_schema
                sync = data[fh.tell() - SYNC_SIZE:fh.tell()]  # the header ends with the file's sync marker
            if data[-SYNC_SIZE:] != sync:  # every block ends with it: Spark reads a cut-off file's whole blocks only
                raise JobInputError(f"corrupt or truncated Avro file {path}: it does not end with its sync marker "
                                    "(a file cut off mid-block)")
            if not isinstance(schema, dict):
                raise JobInputError(f"the writer schema of {path} is not an Avro record")
            names = {f["name"] for f in schema.get("fields", [])}
            for f in required_fields:
                if f not in names:
                    raise JobInputError(f"field {f!r} (record key/ordering) is missing from the schema of {path}")
            with io.BytesIO(data) as fh:
                for i, record in enumerate(fastavro.reader(fh, reader_schema=parsed_reader)):
                    if record_keys and _missing_key(record, list(record_keys)):  # type: ignore[arg-type]
                        raise JobInputError(f"record {i} of {path} has no record key: "
                                            f"{', '.join(record_keys)} null or empty")
                    if not every_record:
                        break
        except JobInputError:
            raise
        except fastavro.read.SchemaResolutionError as exc:
            raise JobInputError(f"the schema of {path} disagrees with the registry's: {first_line(exc)}; "
                                "register the file's schema version (hudi-cdc schemas register)") from None
        except fastavro.schema.SchemaParseException as exc:  # a whole file whose schema no Avro reader takes
            raise JobInputError(f"Avro file {path} has a schema no Avro reader takes: {first_line(exc)} "
                                "(what wrote it? docs/types.md)") from None
        except Exception as exc:  # fastavro raises many types for corrupt input
            raise JobInputError(f"corrupt or truncated Avro file {path}: {first_line(exc)}") from None
        text = json.dumps(schema, sort_keys=True)
        schemas.setdefault(text, (path, schema))
        if groups is not None:
            groups.setdefault(text, []).append(path)
    return list(schemas.values())
