"""PostgreSQL ``numeric(p, s)`` with a negative scale or a scale above the precision (PostgreSQL 15+), which
Debezium turns into Connect decimals no Avro reader takes.

``numeric(3,5)`` (values below 0.01, five decimals) comes as a Decimal of precision 3 and scale 5; Avro's decimal
needs scale <= precision, so the landed file was refused by every reader (measured: every round of the table
failed, "decimal scale must be less than or equal to the precision"). ``numeric(5,-2)`` (whole hundreds, seven
digits) comes with scale 2046: Debezium reads PostgreSQL's typmod, which holds a negative scale in 11 bits, as
unsigned, and gives each value that many decimal zeros. Here, before the record lands, such a column becomes
a decimal a reader takes and holds every value exactly: ``numeric(3,5)`` -> ``decimal(5,5)``, ``numeric(5,-2)`` ->
``decimal(7,0)`` (each value rescaled to 0 decimals, exact: it is a whole number). A row schema is planned once.
"""

from __future__ import annotations

from typing import Any

from hudi_cdc.capture.rows import rebuilt

DECIMAL = "org.apache.kafka.connect.data.Decimal"
PRECISION = "connect.decimal.precision"
_TYPMOD_SCALE = 2048  # the 11 bits PostgreSQL keeps a numeric's scale in: 2046 is -2


def fixed(precision: int, scale: int) -> tuple[int, int] | None:
    """(precision, scale) of a decimal holding every value of numeric(precision, scale) as Debezium gives it, when
    that is not Avro's own; None when it is."""
    if scale >= _TYPMOD_SCALE // 2:  # a negative scale, read as unsigned
        return precision + (_TYPMOD_SCALE - scale), 0
    if scale > precision:
        return scale, scale
    return None


class OddDecimals:
    """Rewrites decimal columns whose precision and scale Avro refuses (above) into ones it takes."""

    def __init__(self):
        from jpype import JClass

        self._System = JClass("java.lang.System")
        self._SchemaBuilder = JClass("org.apache.kafka.connect.data.SchemaBuilder")
        self._Decimal = JClass("org.apache.kafka.connect.data.Decimal")
        self._RoundingMode = JClass("java.math.RoundingMode")
        self._plans: dict[int, tuple[dict[str, int], Any] | None] = {}  # row schema identity -> plan

    def apply(self, out):
        value = out.value()
        if value is None:
            return out
        schema = value.schema()
        ident = int(self._System.identityHashCode(schema))
        if ident not in self._plans:
            self._plans[ident] = self._plan(schema)
        plan = self._plans[ident]
        if plan is None:
            return out
        rescale, widened = plan
        unnecessary = self._RoundingMode.UNNECESSARY  # exact: whole numbers

        def change(name: str, v):
            return v.setScale(rescale[name], unnecessary) if name in rescale and v is not None else v

        return rebuilt(out, widened, change)

    def _plan(self, schema) -> tuple[dict[str, int], Any] | None:
        """(the fields whose values take a new scale: that scale, the schema they land on), None when no field
        changes."""
        changed: dict[str, tuple[int, int]] = {}
        rescale: dict[str, int] = {}
        for f in schema.fields():
            s = f.schema()
            if s.name() is None or str(s.name()) != DECIMAL or s.parameters() is None:
                continue
            params = s.parameters()
            if params.get(PRECISION) is None:
                continue
            scale = int(str(params.get("scale")))
            got = fixed(int(str(params.get(PRECISION))), scale)
            if got is not None:
                changed[str(f.name())] = got
                if got[1] != scale:
                    rescale[str(f.name())] = got[1]
        if not changed:
            return None
        b = self._SchemaBuilder.struct()
        if schema.name() is not None:
            b = b.name(schema.name())
        for f in schema.fields():
            name = str(f.name())
            if name in changed:
                p, sc = changed[name]
                d = self._Decimal.builder(sc).parameter(PRECISION, str(p))
                b = b.field(name, (d.optional() if f.schema().isOptional() else d).build())
            else:
                b = b.field(name, f.schema())
        return rescale, b.build()
