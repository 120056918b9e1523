package normalize

import "strings"

// canonicalName applies the name rules of the namespace's platform:
//   - object stores (s3, gs, abfss, ...): the name is the object key, so leading and trailing slashes go;
//   - path stores (hdfs, file, dbfs): the name is an absolute path, kept as sent but for trailing slashes;
//   - case-insensitive catalogs (snowflake upper; redshift, hive, trino, athena lower): unquoted segments are
//     folded, double-quoted segments kept verbatim;
//   - everything else: kept exactly.
func canonicalName(entity, scheme, name string) (string, error) {
	if err := checkText(entity, PartName, name); err != nil {
		return "", err
	}
	switch {
	case isObjectStore(scheme):
		name = strings.Trim(name, "/")
	case isPathStore(scheme):
		if trimmed := strings.TrimRight(name, "/"); trimmed != "" {
			name = trimmed
		} else {
			name = "/"
		}
	}
	if name == "" {
		return "", identityErr(entity, PartName, RuleEmpty, "/", "the name is only slashes")
	}
	return foldCase(nameFolding(scheme), name), nil
}

// foldCase folds the dot-separated segments of a SQL name, leaving double-quoted segments verbatim.
func foldCase(mode int, name string) string {
	if mode == foldNone {
		return name
	}
	segs := splitQuoted(name)
	for i, s := range segs {
		if strings.HasPrefix(s, `"`) {
			continue
		}
		if mode == foldUpper {
			segs[i] = strings.ToUpper(s)
		} else {
			segs[i] = strings.ToLower(s)
		}
	}
	return strings.Join(segs, ".")
}

// splitQuoted splits on dots outside double quotes; a quoted segment keeps its quotes ("" escapes a quote).
func splitQuoted(name string) []string {
	var segs []string
	start, quoted := 0, false
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '"':
			quoted = !quoted
		case '.':
			if !quoted {
				segs = append(segs, name[start:i])
				start = i + 1
			}
		}
	}
	return append(segs, name[start:])
}
