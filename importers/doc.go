// Package importers defines what every input-format importer provides
// (format sniffing, import into model.Trace) and the shared pieces they use:
// positioned input errors, transparent gzip, and the registry that picks an
// importer for a file. The importers themselves live in sub-packages
// (kineto, nsys, nccltests, joblog); package all wires them into the default registry.
//
// Pipeline place: cmd → importers → model. Importers never call detectors.
package importers
