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

# kube-apiserver 1.32.5's Table of each object (columns; cells but name and age)
TABLES: dict[str, tuple[list[Any], list[Any]]] = {
    "controllerrevisions": (
        [
            ("Name", "string", 0),
            ("Controller", "string", 0),
            ("Revision", "string", 0),
            ("Age", "string", 0),
        ],
        ["<none>", 1],
    ),
    "cronjobs": (
        [
            ("Name", "string", 0),
            ("Schedule", "string", 0),
            ("Timezone", "string", 0),
            ("Suspend", "boolean", 0),
            ("Active", "integer", 0),
            ("Last Schedule", "string", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ],
        ["*/5 * * * *", "<none>", "False", 0, "<none>", "c", "busybox", "<none>"],
    ),
    "endpoints": (
        [("Name", "string", 0), ("Endpoints", "string", 0), ("Age", "string", 0)],
        ["10.1.2.3:80"],
    ),
    "endpointslices": (
        [
            ("Name", "string", 0),
            ("AddressType", "string", 0),
            ("Ports", "string", 0),
            ("Endpoints", "string", 0),
            ("Age", "string", 0),
        ],
        ["IPv4", "80", "10.1.2.3"],
    ),
    "horizontalpodautoscalers": (
        [
            ("Name", "string", 0),
            ("Reference", "string", 0),
            ("Targets", "string", 0),
            ("MinPods", "string", 0),
            ("MaxPods", "string", 0),
            ("Replicas", "string", 0),
            ("Age", "string", 0),
        ],
        ["Deployment/web", "cpu: <unknown>/80%", "1", 3, 0],
    ),
    "ingressclasses": (
        [
            ("Name", "string", 0),
            ("Controller", "string", 0),
            ("Parameters", "string", 0),
            ("Age", "string", 0),
        ],
        ["example.com/ingress", "<none>"],
    ),
    "ingresses": (
        [
            ("Name", "string", 0),
            ("Class", "string", 0),
            ("Hosts", "string", 0),
            ("Address", "string", 0),
            ("Ports", "string", 0),
            ("Age", "string", 0),
        ],
        ["<none>", "*", "", "80"],
    ),
    "networkpolicies": (
        [("Name", "string", 0), ("Pod-Selector", "string", 0), ("Age", "string", 0)],
        ["<none>"],
    ),
    "nodes": (
        [
            ("Name", "string", 0),
            ("Status", "string", 0),
            ("Roles", "string", 0),
            ("Age", "string", 0),
            ("Version", "string", 0),
            ("Internal-IP", "string", 1),
            ("External-IP", "string", 1),
            ("OS-Image", "string", 1),
            ("Kernel-Version", "string", 1),
            ("Container-Runtime", "string", 1),
        ],
        ["Unknown", "<none>", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"],
    ),
    "persistentvolumeclaims": (
        [
            ("Name", "string", 0),
            ("Status", "string", 0),
            ("Volume", "string", 0),
            ("Capacity", "string", 0),
            ("Access Modes", "string", 0),
            ("StorageClass", "string", 0),
            ("VolumeAttributesClass", "string", 0),
            ("Age", "string", 0),
            ("VolumeMode", "string", 1),
        ],
        ["Pending", "", "", "", "", "<unset>", "Filesystem"],
    ),
    "persistentvolumes": (
        [
            ("Name", "string", 0),
            ("Capacity", "string", 0),
            ("Access Modes", "string", 0),
            ("Reclaim Policy", "string", 0),
            ("Status", "string", 0),
            ("Claim", "string", 0),
            ("StorageClass", "string", 0),
            ("VolumeAttributesClass", "string", 0),
            ("Reason", "string", 0),
            ("Age", "string", 0),
            ("VolumeMode", "string", 1),
        ],
        ["1Gi", "RWO", "Retain", "Pending", "", "", "<unset>", "", "Filesystem"],
    ),
    "poddisruptionbudgets": (
        [
            ("Name", "string", 0),
            ("Min Available", "string", 0),
            ("Max Unavailable", "string", 0),
            ("Allowed Disruptions", "integer", 0),
            ("Age", "string", 0),
        ],
        ["1", "N/A", 0],
    ),
    "priorityclasses": (
        [
            ("Name", "string", 0),
            ("Value", "integer", 0),
            ("Global-Default", "boolean", 0),
            ("Age", "string", 0),
            ("PreemptionPolicy", "string", 0),
        ],
        [1000, False, "PreemptLowerPriority"],
    ),
    "storageclasses": (
        [
            ("Name", "string", 0),
            ("Provisioner", "string", 0),
            ("ReclaimPolicy", "string", 0),
            ("VolumeBindingMode", "string", 0),
            ("AllowVolumeExpansion", "string", 0),
            ("Age", "string", 0),
        ],
        ["example.com/disk", "Delete", "Immediate", False],
    ),
}
