"""Shared by the contract generators: a JSON-schema property's type and limits as a Swift `ContractField`."""


def limits(prop, schemas):
    """(types, limits) of a property, $ref followed, oneOf/anyOf merged (first value of each limit wins)."""
    types, out = set(), {}
    def walk(p):
        if not isinstance(p, dict):
            return
        if "$ref" in p:
            walk(schemas[p["$ref"].split("/")[-1]])
            return
        t = p.get("type")
        if isinstance(t, list):
            types.update(x for x in t if x != "null")
        elif t:
            types.add(t)
        for key in ("maxLength", "minLength", "minimum", "maximum", "exclusiveMinimum", "minItems", "maxItems", "enum"):
            if key in p and key not in out:
                out[key] = p[key]
        for sub in p.get("oneOf", []) + p.get("anyOf", []):
            walk(sub)
    walk(prop)
    return sorted(types), out


def swift_field(name, prop, schemas, indent="        "):
    types, o = limits(prop, schemas)
    def number(v):
        if v is None:
            return "nil"
        return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))
    def opt(v):
        return "nil" if v is None else str(v)
    enum = o.get("enum")
    enum_text = "nil" if enum is None else "[" + ", ".join('"%s"' % e for e in enum) + "]"
    return ('%s"%s": .init(types: [%s], minLength: %s, maxLength: %s, minimum: %s, exclusiveMinimum: %s, maximum: %s, '
            'minItems: %s, maxItems: %s, choices: %s),'
            % (indent, name, ", ".join('"%s"' % t for t in types), opt(o.get("minLength")), opt(o.get("maxLength")),
               number(o.get("minimum")), number(o.get("exclusiveMinimum")), number(o.get("maximum")),
               opt(o.get("minItems")), opt(o.get("maxItems")), enum_text))
