"""kube-apiserver 1.32.5's answers to the creates of test_more_kinds.py (names, uids,
times and versions removed), recorded from the real backend."""

from typing import Any

EXPECTED: dict[str, dict[str, Any]] = {
    "controllerrevisions": {
        "kind": "ControllerRevision",
        "apiVersion": "apps/v1",
        "metadata": {},
        "data": {"a": 1},
        "revision": 1,
    },
    "cronjobs": {
        "kind": "CronJob",
        "apiVersion": "batch/v1",
        "metadata": {"generation": 1},
        "spec": {
            "schedule": "*/5 * * * *",
            "concurrencyPolicy": "Allow",
            "suspend": False,
            "jobTemplate": {
                "metadata": {"creationTimestamp": None},
                "spec": {
                    "template": {
                        "metadata": {"creationTimestamp": None},
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "busybox",
                                    "resources": {},
                                    "terminationMessagePath": "/dev/termination-log",
                                    "terminationMessagePolicy": "File",
                                    "imagePullPolicy": "Always",
                                }
                            ],
                            "restartPolicy": "Never",
                            "terminationGracePeriodSeconds": 30,
                            "dnsPolicy": "ClusterFirst",
                            "securityContext": {},
                            "schedulerName": "default-scheduler",
                        },
                    }
                },
            },
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
        },
        "status": {},
    },
    "endpoints": {
        "kind": "Endpoints",
        "apiVersion": "v1",
        "metadata": {},
        "subsets": [
            {"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80, "protocol": "TCP"}]}
        ],
    },
    "endpointslices": {
        "kind": "EndpointSlice",
        "apiVersion": "discovery.k8s.io/v1",
        "metadata": {"generation": 1},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.1.2.3"], "conditions": {}}],
        "ports": [{"name": "", "protocol": "TCP", "port": 80}],
    },
    "horizontalpodautoscalers": {
        "kind": "HorizontalPodAutoscaler",
        "apiVersion": "autoscaling/v2",
        "metadata": {},
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "minReplicas": 1,
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 80},
                    },
                }
            ],
        },
        "status": {"desiredReplicas": 0, "currentMetrics": None},
    },
    "ingressclasses": {
        "kind": "IngressClass",
        "apiVersion": "networking.k8s.io/v1",
        "metadata": {"generation": 1},
        "spec": {"controller": "example.com/ingress"},
    },
    "ingresses": {
        "kind": "Ingress",
        "apiVersion": "networking.k8s.io/v1",
        "metadata": {"generation": 1},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
        "status": {"loadBalancer": {}},
    },
    "networkpolicies": {
        "kind": "NetworkPolicy",
        "apiVersion": "networking.k8s.io/v1",
        "metadata": {"generation": 1},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    },
    "nodes": {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {},
        "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
        "status": {
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
            "nodeInfo": {
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
                "kernelVersion": "",
                "osImage": "",
                "containerRuntimeVersion": "",
                "kubeletVersion": "",
                "kubeProxyVersion": "",
                "operatingSystem": "",
                "architecture": "",
            },
        },
    },
    "persistentvolumeclaims": {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "metadata": {"finalizers": ["kubernetes.io/pvc-protection"]},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    },
    "persistentvolumes": {
        "kind": "PersistentVolume",
        "apiVersion": "v1",
        "metadata": {"finalizers": ["kubernetes.io/pv-protection"]},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "hostPath": {"path": "/tmp/x", "type": ""},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    },
    "poddisruptionbudgets": {
        "kind": "PodDisruptionBudget",
        "apiVersion": "policy/v1",
        "metadata": {"generation": 1},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}},
        "status": {
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        },
    },
    "priorityclasses": {
        "kind": "PriorityClass",
        "apiVersion": "scheduling.k8s.io/v1",
        "metadata": {"generation": 1},
        "value": 1000,
        "preemptionPolicy": "PreemptLowerPriority",
    },
    "storageclasses": {
        "kind": "StorageClass",
        "apiVersion": "storage.k8s.io/v1",
        "metadata": {},
        "provisioner": "example.com/disk",
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
    },
}
