package lua

import (
	"errors"
	"fmt"

	toml "github.com/pelletier/go-toml/v2"
	glua "github.com/yuin/gopher-lua"
)

// openTOML installs tai.toml:
//
//	tai.toml.decode(text) -> table | nil, err
//
// Tables decode as objects, arrays as arrays, dates and times as their TOML
// text (RFC 3339 for offset date-times).
func (h *Host) openTOML(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("toml", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"decode": tomlDecode,
	}))
}

func tomlDecode(L *glua.LState) int {
	text := L.CheckString(1)
	v, err := DecodeTOML(text)
	if err != nil {
		return fail(L, "toml.decode: "+err.Error())
	}
	lv, err := ToLua(L, v)
	if err != nil {
		return fail(L, "toml.decode: "+err.Error())
	}
	L.Push(lv)
	return 1
}

// DecodeTOML parses a TOML document into a map, reporting errors with a line
// and column.
func DecodeTOML(text string) (map[string]any, error) {
	var v map[string]any
	if err := toml.Unmarshal([]byte(text), &v); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return nil, fmt.Errorf("line %d, column %d: %s", line, col, de.Error())
		}
		return nil, err
	}
	if v == nil {
		v = map[string]any{}
	}
	return v, nil
}
