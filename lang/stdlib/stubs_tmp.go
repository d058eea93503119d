package stdlib

import "github.com/pkuinfo/harness/lang/expr"

func registerLists(env *expr.Env)   {}
func registerObjects(env *expr.Env) {}
func registerStrings(env *expr.Env) {}
func registerNumbers(env *expr.Env) {}
func registerTypes(env *expr.Env)   {}
func registerURLs(env *expr.Env)    {}
func registerJSON(env *expr.Env)    {}
