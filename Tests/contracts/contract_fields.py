"""Shared by the contract generators: a JSON-schema property as a Swift `ContractField`: type, limits, pattern, and
nested objects (their properties, required ones, whether others are refused) and array items, to any depth."""


def merged(prop, schemas):
    """One schema from a property: $ref followed, oneOf/anyOf/allOf merged (the first value of each key wins;
    types, properties and required ones are united)."""
    out = {"types": set(), "properties": {}, "required": set()}
    def walk(p, depth=0):
        if not isinstance(p, dict) or depth > 16:
            return
        if "$ref" in p:
            walk(schemas[p["$ref"].split("/")[-1]], depth + 1)
            return
        t = p.get("type")
        if isinstance(t, list):
            out["types"].update(x for x in t if x != "null")
        elif t:
            out["types"].add(t)
        for key in ("maxLength", "minLength", "minimum", "maximum", "exclusiveMinimum", "minItems", "maxItems", "enum",
                    "pattern", "items", "additionalProperties"):
            if key in p and key not in out:
                out[key] = p[key]
        for name, sub in p.get("properties", {}).items():
            out["properties"].setdefault(name, sub)
        out["required"].update(p.get("required", []))
        for sub in p.get("oneOf", []) + p.get("anyOf", []) + p.get("allOf", []):
            walk(sub, depth + 1)
    walk(prop)
    return out


def swift_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def swift_value(prop, schemas, indent, depth=0):
    o = merged(prop, schemas)
    def number(v):
        if v is None:
            return "nil"
        return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))
    def opt(v):
        return "nil" if v is None else str(v)
    enum = o.get("enum")
    enum_text = "nil" if enum is None else "[" + ", ".join(swift_string(str(e)) for e in enum) + "]"
    parts = ["types: [%s]" % ", ".join('"%s"' % t for t in sorted(o["types"])),
             "minLength: %s" % opt(o.get("minLength")), "maxLength: %s" % opt(o.get("maxLength")),
             "minimum: %s" % number(o.get("minimum")), "exclusiveMinimum: %s" % number(o.get("exclusiveMinimum")),
             "maximum: %s" % number(o.get("maximum")), "minItems: %s" % opt(o.get("minItems")),
             "maxItems: %s" % opt(o.get("maxItems")), "choices: %s" % enum_text]
    if o.get("pattern") is not None:
        parts.append("pattern: %s" % swift_string(o["pattern"]))
    inner = indent + "    "
    if o["properties"] and depth < 6:
        fields = "\n".join('%s%s: %s,' % (inner + "    ", swift_string(n), swift_value(p, schemas, inner + "    ", depth + 1))
                           for n, p in o["properties"].items())
        parts.append("properties: [\n%s\n%s]" % (fields, inner))
        parts.append("required: [%s]" % ", ".join(swift_string(r) for r in sorted(o["required"])))
        parts.append("strict: %s" % ("true" if o.get("additionalProperties") is False else "false"))
    if isinstance(o.get("items"), dict) and depth < 6:
        parts.append("items: %s" % swift_value(o["items"], schemas, inner, depth + 1))
    return ".init(" + ", ".join(parts) + ")"


def swift_field(name, prop, schemas, indent="        "):
    return "%s%s: %s," % (indent, swift_string(name), swift_value(prop, schemas, indent))
