// weir-manifest-check decodes rendered Kubernetes manifests strictly into the API types of
// k8s.io/api (and prometheus-operator's monitoring/v1): a field the type does not have, a field
// given twice or a kind that is not registered here is an error. It then checks the invariants
// weir's deployment depends on (see checkInvariants). No schema is read or downloaded: the Go
// types are the schema.
//
// Usage: weir-manifest-check FILE... ("-" reads standard input). One line per object on
// standard output ("ok <apiVersion> <kind> <name>"); every problem on standard error; exit 1
// when there is any.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// object is one decoded manifest with where it came from.
type object struct {
	source string // file:document
	gvk    schema.GroupVersionKind
	obj    runtime.Object
}

func newDecoder() (runtime.Decoder, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		appsv1.AddToScheme, corev1.AddToScheme, policyv1.AddToScheme, monitoringv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	// EnableStrict: unknown and duplicate fields are errors (sigs.k8s.io/json's strict mode and
	// YAML duplicate keys), not silently dropped.
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer(), nil
}

// documents splits a multi-document YAML stream, dropping empty and comment-only documents.
func documents(r io.Reader) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		asJSON, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if trimmed := bytes.TrimSpace(asJSON); len(trimmed) == 0 || string(trimmed) == "null" {
			continue
		}
		out = append(out, doc)
	}
}

func readAll(paths []string, decoder runtime.Decoder) ([]object, []string) {
	var objects []object
	var problems []string
	for _, path := range paths {
		var r io.Reader = os.Stdin
		if path != "-" {
			f, err := os.Open(path)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			defer f.Close()
			r = f
		}
		docs, err := documents(r)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		for i, doc := range docs {
			source := fmt.Sprintf("%s:%d", path, i+1)
			obj, gvk, err := decoder.Decode(doc, nil, nil)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", source, err))
				continue
			}
			objects = append(objects, object{source, *gvk, obj})
		}
	}
	return objects, problems
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: weir-manifest-check FILE... (- for standard input)")
		os.Exit(2)
	}
	decoder, err := newDecoder()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	objects, problems := readAll(os.Args[1:], decoder)
	if len(objects) == 0 && len(problems) == 0 {
		problems = append(problems, "no manifest found")
	}
	problems = append(problems, checkInvariants(objects)...)
	for _, o := range objects {
		fmt.Printf("ok %s %s %s\n", o.gvk.GroupVersion().String(), o.gvk.Kind, nameOf(o.obj))
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "error: "+p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "%d problem(s) in %d object(s)\n", len(problems), len(objects))
		os.Exit(1)
	}
}

func nameOf(obj runtime.Object) string {
	if m, ok := obj.(interface{ GetName() string }); ok {
		return m.GetName()
	}
	return "?"
}
