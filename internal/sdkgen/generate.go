package sdkgen

// Generate reads the document at specPath and returns every generated file
// by its slash-separated path from the repository root.
func Generate(specPath string) (map[string][]byte, error) {
	m, err := Load(specPath)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	goFiles, err := m.GoFiles()
	if err != nil {
		return nil, err
	}
	for name, data := range goFiles {
		out["client/"+name] = data
	}
	out["sdk/typescript/src/generated.ts"] = m.TSFile()
	py, err := m.PyFile()
	if err != nil {
		return nil, err
	}
	out[PythonFile] = py
	return out, nil
}
