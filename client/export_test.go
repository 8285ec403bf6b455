package client

// AnswerType exposes answerTypes to the external tests.
func AnswerType(op string, status int) any {
	f := answerTypes[op]
	if f == nil {
		return nil
	}
	return f(status)
}
