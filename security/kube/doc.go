// Package kube holds the Kubernetes edges of meshd's CA: SecretStore
// keeps the CA state in a Secret that every replica reads, and
// TokenReviewer authenticates workloads by their service-account tokens
// through the API server's TokenReview.
//
// The Secret is created once, with Create: a replica that loses the race
// gets AlreadyExists and reads the winner's, so all replicas sign with one
// root. Updates (rotation) carry the resourceVersion read, so two replicas
// rotating at once cannot both win.
//
// TokenReviewer asks for the audiences it was given: the API server
// accepts only tokens bound to one of them (a token requested with
// `audience: meshd-ca`, as a projected volume gives it), which a token
// minted for another service cannot pass. The identity is the token's
// service account, system:serviceaccount:<namespace>:<name>.
//
// meshd's service account needs get, create and update on its Secret and
// create on tokenreviews.authentication.k8s.io.
package kube
